"""Exercise 16, induction heads: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q1": {
        "offset_zero": {
            "seen": "the scores equal the reference's at offset 0 (keys src + i)",
            "en": "off by one: you scored the earlier occurrence of the query's token itself, not the position right after it, which holds the token to predict.",
            "zh": "差了一位：你计算的是查询词元上一次出现的位置本身，而不是它后面的那个位置；要预测的词元在后面那个位置上。",
        },
        "offset_two": {
            "seen": "the scores equal the reference's at offset 2 (keys src + i + 2)",
            "en": "off by one: your key is two positions after the earlier occurrence of the query's token; the token to predict is right after it.",
            "zh": "差了一位：你的键在查询词元上一次出现位置之后两位；要预测的词元紧跟在它后面。",
        },
        "query_late": {
            "seen": "the scores equal the reference's with queries dst + i + 1 and keys src + i + 2",
            "en": "your queries are one position late: the query is the copy's token that makes the prediction (the copy's i-th token), not the token being predicted.",
            "zh": "你的查询晚了一位：查询是做出预测的那个复制段词元（复制段的第 i 个词元），而不是被预测的词元。",
        },
        "first_query_left_out": {
            "seen": "the scores equal the reference's without the query dst (i from 1)",
            "en": "you left out the copy's first token as a query: the copy loss leaves out the first target, but the prediction made at the copy's first token is scored, so that token is a query.",
            "zh": "你把复制段的第一个词元排除在查询之外了：复制损失排除的是第一个目标，但在复制段第一个词元处做出的预测是要计分的，所以这个词元是查询。",
        },
        "last_query_added": {
            "seen": "the scores equal the reference's with one query more (i up to P - 1)",
            "en": "one query too many: at the copy's last token the next token is no longer part of the copy, so that prediction is not scored.",
            "zh": "多了一个查询：在复制段最后一个词元处，下一个词元已经不属于复制段，这个预测不计分。",
        },
        "pooled": {
            "seen": "the scores equal the mean over all the batch's copy positions pooled together",
            "en": "you averaged over the copy positions of all the sequences together, so a long copy counts more than a short one: average within each sequence first, then over the sequences.",
            "zh": "你把所有序列的复制位置放在一起平均了，于是长的复制段比短的分量更重：请先在每个序列内部平均，再在序列之间平均。",
        },
        "transposed": {
            "seen": "the scores equal the reference's with the query and key axes swapped",
            "en": "query and key are swapped: in the weights the row is the query and the column the key; you read the weight of an earlier position on a later one, which the causal mask makes 0.",
            "zh": "查询和键弄反了：注意力权重中行是查询、列是键；你读的是较早位置对较晚位置的权重，因果掩码使它为 0。",
        },
    },
    "q2": {
        "sequence_axis": {
            "seen": "the loss equals the reference's with positions h*d_k .. (h+1)*d_k - 1 zeroed (the sequence axis)",
            "en": "you zeroed positions of the sequence, not features: the merged heads are [B, T, D] and a head's output is a block of d_k features on the last axis, at every position.",
            "zh": "你清零的是序列中的位置，而不是特征：合并后的头是 [B, T, D]，一个头的输出是最后一个轴上的一块 d_k 个特征，每个位置都有。",
        },
        "o_proj_output": {
            "seen": "the loss equals the reference's with the head's features zeroed after o_proj",
            "en": "you zeroed features of o_proj's output, i.e. dimensions of the residual stream, not the head: a head's output is the input of o_proj, its d_k features of the merged heads.",
            "zh": "你清零的是 o_proj 输出的特征，也就是残差流的维度，而不是这个头：头的输出是 o_proj 的输入，即合并后的头中属于它的 d_k 个特征。",
        },
        "query_zeroed": {
            "seen": "the loss equals the reference's with the head's queries zeroed",
            "en": "zeroing the head's queries does not remove it: with equal scores it attends uniformly to the past and still adds the mean of its values. Remove what the head outputs.",
            "zh": "把这个头的查询清零并不能去掉它：分数全部相等时它均匀地关注过去的位置，仍然会加上它的值的平均。要去掉的是这个头的输出。",
        },
        "layer_and_head_swapped": {
            "seen": "the loss equals the reference's with layer and head swapped",
            "en": "layer and head are swapped: you removed head number `layer` of layer number `head`.",
            "zh": "层和头弄反了：你去掉的是第 `head` 层的第 `layer` 个头。",
        },
        "nothing_removed": {
            "seen": "the loss equals the whole model's",
            "en": "nothing was removed: the loss is the whole model's. Check that your change reaches the forward pass (a forward pre-hook changes the input only through what it returns).",
            "zh": "什么也没有去掉：损失就是完整模型的损失。请检查你的改动是否真的作用到了前向计算上（前向预钩子只能通过它的返回值改变输入）。",
        },
        "left_in_model": {
            "seen": "the model's logits after the call differ from the model's before it",
            "en": "the ablation is still in the model after your function returned (a hook not removed, or weights not restored): every later use of the model runs without that head.",
            "zh": "函数返回之后，消融仍然留在模型里（钩子没有移除，或权重没有恢复）：之后每次使用这个模型都少了那个头。",
        },
    },
    "q4": {
        "weights_not_recomputed": {
            "seen": "the scores equal the whole model's, without the ablation",
            "en": "these are the scores of the whole model: the attention weights must come from a forward pass with the heads removed, since what a layer-0 head writes is what layer 1's queries and keys read.",
            "zh": "这些是完整模型的分数：注意力权重必须来自去掉这些头之后的前向计算，因为第 0 层的头写入的内容正是第 1 层的查询和键所读取的。",
        },
    },
    "q5": {
        "summed_alone": {
            "seen": "joint_cost equals the sum of the heads' costs when each is removed alone",
            "en": "that is the sum of the costs of removing each head alone: remove the heads together, in one forward pass; heads that do the same job can stand in for one another, so the two differ.",
            "zh": "这是逐个单独去掉每个头的代价之和：请在同一次前向计算中把这些头一起去掉；做同一件事的头可以互相顶替，所以两者并不相同。",
        },
        "loss_not_increase": {
            "seen": "joint_cost equals the copy loss with the heads removed, not its increase",
            "en": "that is the copy loss without those heads: the question asks for its increase over the loss of the whole model.",
            "zh": "这是去掉这些头之后的复制损失：题目要的是它相对完整模型损失的增加量。",
        },
    },
}
