"""Exercise 2, multi-head attention: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q3": {
        "no_scale": {
            "seen": "the weights equal the reference's without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled: each dot product is divided by the square root of the key width d_k of one head, so that the softmax does not saturate as d_k grows.",
            "zh": "分数没有缩放：每个点积都要除以一个头的键宽度 d_k 的平方根，这样 softmax 才不会随 d_k 增大而饱和。",
        },
        "softmax_axis": {
            "seen": "the weights equal the reference's with the softmax over the queries",
            "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
            "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
        },
    },
    "q6": {
        "no_scale": {
            "seen": "the weights equal the reference's without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled: each dot product is divided by the square root of the key width d_k of one head, so that the softmax does not saturate as d_k grows.",
            "zh": "分数没有缩放：每个点积都要除以一个头的键宽度 d_k 的平方根，这样 softmax 才不会随 d_k 增大而饱和。",
        },
        "softmax_axis": {
            "seen": "the weights equal the reference's with the softmax over the queries",
            "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
            "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
        },
        "d_model_over_heads": {
            "seen": "the weights equal the softmax of the scores divided by sqrt(D / H) (here 2) instead of sqrt(d_k) (here sqrt(2))",
            "en": "you scaled by the square root of D / H, a head's width only when the projections are D x D; here the queries and keys of one head are compared in d_k dimensions, read from W_q's columns, and d_k is not D / H.",
            "zh": "你按 D / H 的平方根缩放；只有投影是 D x D 时，D / H 才是一个头的宽度。这里一个头的查询和键在 d_k 维中比较，d_k 要从 W_q 的列数读出，它不等于 D / H。",
        },
    },
    "q7": {
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
        "w_o_transposed": {
            "seen": "each head's term goes through the columns of W_o (W_o transposed) instead of its rows",
            "en": "your heads' terms go through W_o transposed: with x @ W, the output is the concatenated heads times W_o, so head h's d features meet the d rows of W_o at its place, not its columns.",
            "zh": "你的各头的项经过的是转置后的 W_o：按 x @ W 的写法，输出是拼接后的各头乘以 W_o，所以头 h 的 d 个特征对应的是 W_o 中相应位置的 d 行，而不是那些列。",
        },
        "equal_share": {
            "seen": "every head's term equals the layer's output divided by H",
            "en": "you shared the output equally among the heads; each head's term is what its own attention, through the rows of W_o that read that head, adds to the output, and the heads differ.",
            "zh": "你把输出平均分给了各个头；每个头的项是它自己的注意力经过 W_o 中读取这个头的那些行之后加到输出上的部分，各个头并不相同。",
        },
    },
    "q8": {
        "wrong_block": {
            "seen": "the silenced head's weights differ from the reference's (another block of W_q was zeroed)",
            "en": "the wrong part of W_q is zeroed: head h's queries come from the h-th block of d columns of the projection (question 1), so that block of columns is what to silence, not rows and not another head's block.",
            "zh": "W_q 中被置零的部分不对：头 h 的查询来自投影的第 h 块、共 d 列（第 1 题），所以要静音的是这一块列，而不是行，也不是别的头的那一块。",
        },
    },
}
