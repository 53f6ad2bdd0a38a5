"""Exercise 4, cross-attention: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q2": {
        "no_mask": {
            "seen": "with a memory mask, the weights equal those without it",
            "en": "memory_mask is ignored: blocked keys must get weight 0, so their scores must become -inf before the softmax.",
            "zh": "memory_mask 被忽略了：被屏蔽的键的权重必须为 0，因此要在 softmax 之前把它们的分数设为 -inf。",
        },
        "inverted_mask": {
            "seen": "the weights equal the reference's with the memory mask negated (a fully blocked row: nan or 0)",
            "en": "the mask is inverted: True marks the keys that may be attended, so the keys to block are where it is False.",
            "zh": "掩码反了：True 标记可以被关注的键，所以要屏蔽的是它为 False 的位置。",
        },
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
        "keys_from_x": {
            "seen": "the weights are [B, H, L, L]: the keys and values were projected from x",
            "en": "your weights are [B, H, L, L], the self-attention of x: in cross-attention only the queries come from x; the keys and the values come from memory (its S tokens), as in question 1.",
            "zh": "你的注意力权重是 [B, H, L, L]，即 x 的自注意力：在交叉注意力中只有查询来自 x，键和值都来自 memory（它的 S 个词元），和第 1 题一样。",
        },
    },
    "q4": {
        "no_mask": {
            "seen": "a step's output equals the one without the memory mask",
            "en": "the memory_mask is ignored: padded memory tokens must get weight 0.",
            "zh": "memory_mask 被忽略了：记忆中的填充词元的权重必须为 0。",
        },
        "inverted_mask": {
            "seen": "a step's output equals the one with the memory mask negated",
            "en": "the mask is inverted: True marks the keys that may be attended, so the keys to block are where it is False.",
            "zh": "掩码反了：True 标记可以被关注的键，所以要屏蔽的是它为 False 的位置。",
        },
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
        "d_model_scale": {
            "seen": "a step's output equals the one with the scores divided by sqrt(D) instead of sqrt(d)",
            "en": "you scaled the scores by the square root of D, the model's width; each head compares its queries and keys in its own d = D / H dimensions, and the scale comes from that width.",
            "zh": "你按模型宽度 D 的平方根缩放分数；每个头在它自己的 d = D / H 维中比较查询和键，缩放应来自这个宽度。",
        },
    },
    "q5": {
        "padding_matched": {
            "seen": "the mask lets a padding query attend to the padding keys (-1 == -1)",
            "en": "padding meets padding: -1 equals -1, so your padding queries attend to the padding keys. Padding is no sentence pair: it must never be allowed.",
            "zh": "填充碰上了填充：-1 等于 -1，所以你的填充查询关注了填充键。填充不属于任何句子对：它永远不能被允许。",
        },
        "inverted_mask": {
            "seen": "the mask equals the reference's negation",
            "en": "your mask is inverted: True must mean that the decoder token may attend to the memory token.",
            "zh": "你的掩码反了：True 必须表示解码器词元可以关注这个记忆词元。",
        },
        "transposed": {
            "seen": "the mask is [B, 1, S, L]",
            "en": "your mask is [B, 1, S, L]: the rows are the decoder's L queries, the columns the memory's S keys.",
            "zh": "你的掩码是 [B, 1, S, L]：行应是解码器的 L 个查询，列应是记忆的 S 个键。",
        },
    },
}
