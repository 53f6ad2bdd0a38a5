"""Exercise 15, the capstone: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""


MISTAKES = {
    "q1": {
        "no_mask": {
            "seen": "the output equals the attention without the causal mask",
            "en": "position t may not attend to later positions: their scores must be blocked (-inf) before the softmax.",
            "zh": "位置 t 不能关注后面的位置：必须在 softmax 之前屏蔽它们的分数（设为 -inf）。",
        },
        "inverted_mask": {
            "seen": "the output equals the attention with the causal mask inverted (the last position sees nothing: nan)",
            "en": "the causal mask is inverted: you blocked the past and the position itself and let the future through. The last position then sees no key at all, hence nan.",
            "zh": "因果掩码反了：你屏蔽了过去和位置本身，却放行了未来。于是最后一个位置一个键也看不到，结果为 nan。",
        },
        "no_scale": {
            "seen": "the output equals the attention without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled: divide them by the square root of the head width d_k.",
            "zh": "分数没有缩放：请把它们除以头宽度 d_k 的平方根。",
        },
        "softmax_axis": {
            "seen": "the output equals the attention with the softmax over the queries",
            "en": "the softmax runs over the keys (the last axis), so that each query's weights sum to 1.",
            "zh": "softmax 在键上（最后一个轴）进行，这样每个查询的注意力权重之和才为 1。",
        },
        "heads_by_view": {
            "seen": "the output equals the attention with the heads split by a view straight to [B, H, T, d_k]",
            "en": "your heads are cut straight out of the [B, T, D] memory as [B, H, T, d_k]: that reads the numbers in another order, so a head's row t mixes features of several positions (and later tokens leak into earlier outputs). Head h is columns h * d_k to (h + 1) * d_k of every position: split the last axis into heads first, then bring the head axis before the sequence axis.",
            "zh": "你的头是把 [B, T, D] 的内存直接看成 [B, H, T, d_k] 切出来的：这样按另一种顺序读取数据，一个头的第 t 行混合了好几个位置的特征（后面的词元也就泄漏到前面的输出里）。头 h 是每个位置的第 h * d_k 到 (h + 1) * d_k 列：先把最后一个轴拆成多个头，再把头的轴移到序列轴之前。",
        },
    },
    "q5": {
        "reversed_shift": {
            "seen": "one SGD step of train_step follows the gradient of each position predicting the token BEFORE it (inputs from 1, targets up to -1)",
            "en": "your step makes each position predict the token before it, one it has already read: in a language model, position t predicts token t + 1, the one it has not seen yet.",
            "zh": "你的这一步让每个位置去预测它前面的词元，而那个词元它已经读过了：在语言模型中，位置 t 预测的是还没看到的词元 t + 1。",
        },
        "unshifted_targets": {
            "seen": "one SGD step of train_step follows the gradient of the loss of each position against its OWN token",
            "en": "each position is trained to predict its own token, which it can read: the target of position t is the token that comes after it.",
            "zh": "每个位置被训练去预测它自己的词元，而这个词元它读得到：位置 t 的目标是它后面的那个词元。",
        },
        "no_zero_grad": {
            "seen": "the second SGD step follows the sum of both batches' gradients",
            "en": "the second step also used the first batch's gradient: PyTorch adds each backward's gradients to the ones already stored, until they are cleared.",
            "zh": "第二步还用上了第一个批量的梯度：PyTorch 会把每次 backward 的梯度累加到已存的梯度上，直到它们被清零。",
        },
    },
}
