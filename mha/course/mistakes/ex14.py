"""Exercise 14, the modern block: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE

MISTAKES = {
    "q5": {
        "overflow": {
            "seen": "the result equals RMSNorm computed directly in float16 (squares above 65,504 become inf)",
            "en": "the squares overflow: an entry above about 256 squares to more than 65,504, float16's largest number, and the row comes out as zeros. The root mean square must be computed without ever forming such a square.",
            "zh": "平方溢出了：大于约 256 的元素平方后超过 float16 的最大数 65,504，这一行的结果就变成了零。计算均方根时绝不能构造出这样的平方。",
        },
        "eps_unscaled": {
            "seen": "the result equals RMSNorm of the rescaled row with eps left as it is",
            "en": "the rows were rescaled but eps was not: eps is added to the mean square of x, so once the row is divided by a factor, eps must follow the mean square. It matters in rows of tiny entries.",
            "zh": "行被重新缩放了，eps 却没有：eps 是加在 x 的均方上的，所以一旦这一行除以某个因子，eps 也必须随均方一起变化。在元素很小的行上，这一点很要紧。",
        },
    },
    "q6": {
        "no_scale": NO_SCALE,
        "unit_length": {
            "seen": "the scores equal those of queries and keys scaled to length 1",
            "en": "the vectors were scaled to length 1: RMSNorm makes the root MEAN square 1, which is a different length for a vector of d features.",
            "zh": "向量被缩放到了长度 1：RMSNorm 使均方根（平方的**平均**的平方根）为 1，对于一个有 d 个特征的向量，这是另一个长度。",
        },
    },
}
