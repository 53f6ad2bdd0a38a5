"""Exercise 9, debugging attention: the classic mistakes, question by question.

Edit freely: ``seen`` says how the checks recognise the mistake (the learner's result equals the
reference with the mistake applied), ``en``/``zh`` is the hint. A hint names the mistake and the
idea to check, never the code that fixes it. A new mistake also needs a planted bug in
grading/known_bugs.py (feedback "mistake:<id>") and its value in the question's test.
"""

_NO_SCALE = {
    "seen": "the result equals the reference's without the 1/sqrt(d_k) scale",
    "en": "the scores are not scaled: each dot product is divided by the square root of the key width d_k of one head, so that the softmax does not saturate as d_k grows.",
    "zh": "分数没有缩放：每个点积都要除以一个头的键宽度 d_k 的平方根，这样 softmax 才不会随 d_k 增大而饱和。",
}
_SOFTMAX_AXIS = {
    "seen": "the result equals the reference's with the softmax over the queries",
    "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
    "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
}

MISTAKES = {
    "q1": {
        "floor_scale": {
            "seen": "the weights equal the reference's with the scores scaled by // sqrt(d_k)",
            "en": "the scores are whole numbers: `//` is floor division, it rounds every score down. Check the operator that scales them.",
            "zh": "分数都是整数：`//` 是向下取整除法，会把每个分数向下取整。请检查缩放它们所用的运算符。",
        },
        "no_scale": _NO_SCALE,
        "softmax_axis": _SOFTMAX_AXIS,
        "inverted_mask": {
            "seen": "the weights equal the reference's with the mask negated (a fully blocked row: nan or 0)",
            "en": "the mask is inverted: True means 'may attend', so the keys to block are where it is False.",
            "zh": "掩码反了：True 表示“可以关注”，所以要屏蔽的是它为 False 的位置。",
        },
    },
}
