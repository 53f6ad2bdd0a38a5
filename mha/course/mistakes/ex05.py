"""Exercise 5, the Transformer block: the classic mistakes of its thought questions.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q7": {
        "inverted": {
            "seen": "the mask is True outside the band",
            "en": "your mask is True where the key is outside the band: in the mask convention of `mha`, True means the query may attend to the key.",
            "zh": "你的掩码在键位于带外的地方为 True：按 `mha` 的掩码约定，True 表示查询可以关注这个键。",
        },
        "strict": {
            "seen": "the band leaves out the keys at distance exactly w",
            "en": "the keys at distance exactly w are left out: the band includes them (distance at most w).",
            "zh": "距离恰好为 w 的键被排除了：带内也包括它们（距离不超过 w）。",
        },
        "one_row": {
            "seen": "only the first row of the batch is changed",
            "en": "only the first sentence of the batch sees the change: move the token at that position in every row of the batch.",
            "zh": "只有批量中的第一个句子看到了改动：要在批量的每一行中移动那个位置上的词元。",
        },
    },
    "q8": {
        "padding_kept": {
            "seen": "the real positions are right but the padding positions are not 0",
            "en": "the real tokens are right, but the padding positions must be exactly 0: start from a result that holds nothing but zeros.",
            "zh": "真实词元的结果是对的，但填充位置必须恰好为 0：从一个全是 0 的结果开始。",
        },
    },
}
