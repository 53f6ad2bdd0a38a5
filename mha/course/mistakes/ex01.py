"""Exercise 1, self-attention from scratch: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q1": {
        "floor_scale": {
            "seen": "the scores equal (q @ k^T) // sqrt(d_k)",
            "en": "your scores are whole numbers: `//` is floor division, it rounds every score down. Check the operator you divide with.",
            "zh": "你的分数都是整数：`//` 是向下取整除法，会把每个分数向下取整。请检查你做除法用的运算符。",
        },
        "no_scale": {
            "seen": "the scores equal q @ k^T, not divided by sqrt(d_k)",
            "en": "the scores are not scaled: every dot product is divided by the square root of the key width d_k, so that the scores' spread does not grow with d_k.",
            "zh": "分数没有缩放：每个点积都要除以键宽度 d_k 的平方根，这样分数的离散程度才不会随 d_k 增大。",
        },
        "divided_by_d_k": {
            "seen": "the scores equal (q @ k^T) / d_k",
            "en": "you divided by d_k itself: the scale is its square root, which keeps the scores' variance near 1.",
            "zh": "你除以的是 d_k 本身：缩放因子是它的平方根，这样分数的方差才保持在 1 附近。",
        },
        "swapped": {
            "seen": "the scores equal the transpose of the reference ([S, L] values)",
            "en": "rows and columns are swapped: row i must hold query i's scores against every key (L rows, S columns).",
            "zh": "行和列弄反了：第 i 行必须是查询 i 与每个键的分数（L 行，S 列）。",
        },
        "fixed_scale": {
            "seen": "with d_k = 6 the scores equal (q @ k^T) / sqrt(8), the running example's scale",
            "en": "your scale is right only for the running example's d_k = 8: the scale must follow the width of the queries and keys that the function receives.",
            "zh": "你的缩放只对贯穿全书的例子中的 d_k = 8 才正确：缩放必须随函数收到的查询和键的宽度而变。",
        },
        "batch_transpose": {
            "seen": "the call raises a size error on a batched k (k.T reverses every axis)",
            "en": "on a batched tensor the keys' transpose must swap only the last two axes (the keys and their features), not reverse every axis.",
            "zh": "对带批量轴的张量，键的转置只能交换最后两个轴（键及其特征），而不能把所有轴的顺序都反过来。",
        },
    },
    "q2": {
        "softmax_axis": {
            "seen": "the result equals the softmax over the first axis",
            "en": "your columns sum to 1, not your rows: each query's weights are normalised over the keys, the last axis.",
            "zh": "你的结果是每一列之和为 1，而不是每一行：每个查询的注意力权重要在键上，即最后一个轴上归一化。",
        },
        "global_max": {
            "seen": "the result has nan for a row whose scores are all far below the largest score of the whole tensor",
            "en": "a row whose scores are all far below the largest score of the whole tensor comes out nan: every exponential of that row underflows to 0, and 0 / 0 = nan. The number you subtract must keep at least one exponential of every row equal to 1: which maximum is that?",
            "zh": "如果一行的分数都远低于整个张量中的最大分数，这一行就会得到 nan：它的每个指数都下溢为 0，而 0 / 0 = nan。减去的数必须让每一行至少有一个指数等于 1：那是哪一个最大值？",
        },
        "not_normalised": {
            "seen": "the result equals exp(scores)",
            "en": "the exponentials are not divided by their row sum.",
            "zh": "指数没有除以它们所在行的和。",
        },
        "overflow": {
            "seen": "the result has nan for scores of +-1000",
            "en": "exp(1000) overflows to inf and inf / inf = nan. The softmax of a row does not change when one number is subtracted from the whole row: which number keeps every exponential at most 1?",
            "zh": "exp(1000) 上溢为 inf，而 inf / inf = nan。整行减去同一个数时，这一行的 softmax 不变：减去哪个数能让每个指数都不超过 1？",
        },
    },
    "q3": {
        "no_scale": {
            "seen": "the weights equal the reference's without the 1/sqrt(d_k) scale",
            "en": "the weights come from unscaled scores: check that every score is divided by the square root of d_k (your attention_scores does it).",
            "zh": "注意力权重来自没有缩放的分数：请检查每个分数是否都除以了 d_k 的平方根（你写的 attention_scores 会做这一步）。",
        },
        "softmax_axis": {
            "seen": "the weights equal the reference's with the softmax over the queries",
            "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
            "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
        },
        "no_softmax": {
            "seen": "the output equals scores @ v",
            "en": "did you skip the softmax? The output averages the values with weights that are positive and sum to 1.",
            "zh": "是不是漏掉了 softmax？输出是用为正且和为 1 的权重对值求平均。",
        },
        "weights_transposed": {
            "seen": "the output equals weights^T @ v",
            "en": "use the weights as they are: row i holds query i's weights over the keys, and output row i is query i's.",
            "zh": "直接使用注意力权重：第 i 行是查询 i 在各个键上的权重，输出的第 i 行属于查询 i。",
        },
        "elementwise": {
            "seen": "the call raises a size error (weights * v)",
            "en": "each output row is a weighted sum over the value rows, a matrix product; `*` multiplies element by element.",
            "zh": "每个输出行是对值的各行的加权和，是矩阵乘法；`*` 是逐元素相乘。",
        },
    },
    "q4": {
        "no_projection": {
            "seen": "the weights equal attention(x, x, x)'s",
            "en": "the tokens are not projected: queries, keys and values are three different projections of the same tokens.",
            "zh": "词元没有经过投影：查询、键和值是同一组词元的三个不同投影。",
        },
        "transposed_projection": {
            "seen": "the weights equal those of the transposed projections",
            "en": "the projections are [D, d] and are applied as given: the tokens' D features meet their D rows. Do not transpose them.",
            "zh": "投影矩阵的形状是 [D, d]，按原样使用：词元的 D 个特征对应它们的 D 行。不要转置它们。",
        },
    },
    "q5": {
        "overflow16": {
            "seen": "the result has inf or nan",
            "en": "the dot products overflow float16 (largest finite number 65504): inf - inf = nan in the softmax. In which precision must the scores be computed so that they fit?",
            "zh": "点积超出了 float16 的范围（最大有限数为 65504）：softmax 中 inf - inf = nan。分数要用哪种精度计算才放得下？",
        },
        "prescaled": {
            "seen": "the result has inf or nan for entries near 1000 and d_k = 32 (q and k scaled down in float16 before their product)",
            "en": "scaling q and k down before their product is not enough: with entries near 1000 and d_k = 32 the scaled dot products still pass float16's largest finite number, 65504. In which precision must the scores be computed so that they fit?",
            "zh": "在相乘之前先把 q 和 k 缩小还不够：元素接近 1000、d_k = 32 时，缩放后的点积仍然超过 float16 的最大有限数 65504。分数要用哪种精度计算才放得下？",
        },
        "no_scale": {
            "seen": "the result equals the attention without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled by the square root of d_k: attention_half computes the same attention as attention, only in float16.",
            "zh": "分数没有按 d_k 的平方根缩放：attention_half 计算的注意力与 attention 相同，只是用 float16。",
        },
        "softmax_axis": {
            "seen": "the result equals the attention with the softmax over the queries",
            "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
            "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
        },
    },
    "q6": {
        "summed": {
            "seen": "the large-t limit equals the sum of the value rows",
            "en": "at a large temperature every key gets the same weight, and the weights still sum to 1: the row is an average, not a sum.",
            "zh": "温度很大时每个键得到相同的权重，而权重之和仍为 1：这一行是平均，而不是求和。",
        },
        "swapped_limits": {
            "seen": "the large-t limit equals the small-t one, or the other way round",
            "en": "your two limits are swapped: dividing the scores by a large t flattens their differences; dividing by a small t magnifies them.",
            "zh": "你的两个极限弄反了：分数除以很大的 t 会抹平它们之间的差别；除以很小的 t 会放大这些差别。",
        },
        "argmax_axis": {
            "seen": "the small-t limit picks, for each key, its best query (the argmax over the queries)",
            "en": "you picked the best query for each key; each query (each output row) takes the value of its own best key, the largest score in its row.",
            "zh": "你为每个键挑选了最好的查询；应当是每个查询（每个输出行）取它自己得分最高的键的值，即它那一行中最大的分数。",
        },
    },
    "q7": {
        "global_max": {
            "seen": "the weights have nan for a query whose scores are all far below the largest score of the whole tensor",
            "en": "still nan for a query whose scores are all far below the largest score of the whole tensor: every exponential of that row underflows to 0, and 0 / 0 = nan. Which maximum keeps at least one exponential of every row equal to 1?",
            "zh": "对于所有分数都远低于整个张量中最大分数的查询，结果仍是 nan：那一行的每个指数都下溢为 0，而 0 / 0 = nan。减去哪一个最大值才能让每一行至少有一个指数等于 1？",
        },
        "value_width": {
            "seen": "the weights equal the softmax of the scores scaled by sqrt(d_v)",
            "en": "your weights are right when the values are as wide as the queries and keys, and off here, where they are not: which width sets the scale of the scores in your code, and which one should?",
            "zh": "当值与查询和键一样宽时，你的注意力权重是对的；这里两者宽度不同，权重就错了：你的代码用哪个宽度来设定分数的缩放，又应该用哪个？",
        },
    },
}
