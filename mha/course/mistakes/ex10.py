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
        "acc_not_rescaled": {
            "seen": "the output equals the one whose normaliser l is rescaled when the maximum grows, but not acc",
            "en": "your normaliser l is rescaled when the maximum grows, but acc is not: acc's terms were computed against the old maximum too, so it needs the same factor as l.",
            "zh": "最大值变大时，你重新缩放了归一化因子 l，却没有缩放 acc：acc 的各项也是相对于旧的最大值算出来的，所以它需要乘以和 l 相同的因子。",
        },
    },
    "q4": {
        "overflow": {
            "seen": "the loss has inf or nan for logits up to ~130 (exp of the raw logits)",
            "en": "exp of a logit near 130 overflows float32 (its largest number is about e^88) and your loss becomes inf or nan. Subtracting one number from all the logits of a row leaves log-sum-exp minus that number unchanged: which number keeps every exponential at most 1?",
            "zh": "logit 接近 130 时 exp 会超出 float32 的范围（它的最大数约为 e^88），你的损失就成了 inf 或 nan。一行的所有 logit 同时减去一个数，log-sum-exp 只会相应地减去这个数：减去哪个数能让每个指数都不超过 1？",
        },
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
