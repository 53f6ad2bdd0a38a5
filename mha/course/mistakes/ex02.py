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
    },
    "q7": {
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
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
