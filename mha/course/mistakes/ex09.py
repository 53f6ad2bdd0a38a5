"""Exercise 9, debugging attention: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q1": {
        "floor_scale": {
            "seen": "the weights equal the reference's with the scores scaled by // sqrt(d_k)",
            "en": "the scores are whole numbers: `//` is floor division, it rounds every score down. Check the operator that scales them.",
            "zh": "分数都是整数：`//` 是向下取整除法，会把每个分数向下取整。请检查缩放它们所用的运算符。",
        },
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
        "inverted_mask": {
            "seen": "the weights equal the reference's with the mask negated (a fully blocked row: nan or 0)",
            "en": "the mask is inverted: True means 'may attend', so the keys to block are where it is False.",
            "zh": "掩码反了：True 表示“可以关注”，所以要屏蔽的是它为 False 的位置。",
        },
    },
    "q6": {
        "no_scale": NO_SCALE,
        "scale_by_d_model": {
            "seen": "the output equals the layer's with the scores divided by sqrt(D), the whole model width",
            "en": "the scores are divided by the square root of the model width D: each head's dot products run over its own d_k = D / H features, and that is the width to scale by.",
            "zh": "分数除以了模型宽度 D 的平方根：每个头的点积只在它自己的 d_k = D / H 个特征上求和，应当按这个宽度缩放。",
        },
        "mask_discarded": {
            "seen": "the output equals the layer's with no mask at all",
            "en": "the padding keys still get weight, as if there were no mask: look at whether the masked scores are really the ones used afterwards (an out-of-place method returns a new tensor).",
            "zh": "填充的键仍然得到了权重，就像没有掩码一样：请检查被掩码处理过的分数是否真的被后面用上了（非原地的方法会返回一个新张量）。",
        },
        "mask_on_queries": {
            "seen": "the output equals the layer's with the padding positions blocked as queries instead of as keys",
            "en": "the padding is blocked along the wrong axis of the scores [B, H, L, S]: it is the padding KEYS no query may attend to, so the mask must broadcast over the queries.",
            "zh": "填充在分数 [B, H, L, S] 的错误轴上被屏蔽了：不允许任何查询关注的是填充的**键**，所以掩码必须在查询轴上广播。",
        },
        "max_over_queries": {
            "seen": "the output equals the layer's with the maximum subtracted over the queries (nan where a key is blocked for every query)",
            "en": "the subtracted maximum is taken over the wrong axis: it leaves the softmax unchanged only when it is constant along the axis the softmax normalises, and a blocked key column gives -inf - (-inf) = nan.",
            "zh": "减去的最大值取错了轴：只有当它沿 softmax 归一化的那个轴保持不变时，才不会改变 softmax 的结果；而一整列被屏蔽的键会得到 -inf - (-inf) = nan。",
        },
        "softmax_axis": SOFTMAX_AXIS,
        "inverted_mask": {
            "seen": "the output equals the layer's with the padding mask negated (a row without padding: nan or 0)",
            "en": "the mask is inverted: the real tokens got blocked and the padding kept. Check which keys the comparison with the lengths marks True.",
            "zh": "掩码反了：真实词元被屏蔽了，填充反而被保留。请检查与长度比较之后，哪些键被标为 True。",
        },
    },
}
