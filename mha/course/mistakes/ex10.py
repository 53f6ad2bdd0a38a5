"""Exercise 10, efficient attention: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""


MISTAKES = {
    "q2": {
        "no_scale": {
            "seen": "the output equals attention without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled: each block's dot products must be multiplied by the given scale before the running maximum and exp.",
            "zh": "分数没有缩放：每个块的点积都要先乘以给定的缩放因子，再参与滑动最大值和 exp 的计算。",
        },
    },
    "q4": {
        "stale_sum": {
            "seen": "the loss equals the one computed with the running sum never rescaled when the maximum grows",
            "en": "the running sum is stale: its terms were computed against an older, smaller maximum, and they must be brought to the new maximum when a block raises it, as in the online softmax.",
            "zh": "滑动求和过时了：它的各项是相对于一个更早、更小的最大值算出来的；当某个块抬高了最大值时，必须像在线 softmax 中那样，把它们换算到新的最大值上。",
        },
        "sign": {
            "seen": "the loss equals minus the cross-entropy",
            "en": "the sign is reversed: the cross-entropy is the log-normaliser MINUS the target's logit, a number >= 0.",
            "zh": "符号反了：交叉熵是对数归一化因子*减去*目标的 logit，它是一个 >= 0 的数。",
        },
    },
}
