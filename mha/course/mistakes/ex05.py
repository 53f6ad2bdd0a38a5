"""Exercise 5, the Transformer block: the classic mistakes of its thought questions.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q4": {
        "first_sequence": {
            "seen": "the output equals the layer's with the first sequence's attention output added to every sequence (self_attn(x, mask)[0])",
            "en": "every sequence got the first sequence's attention output: self_attn here returns the attention output itself [B, L, D], not a pair (out, weights) as nn.MultiheadAttention does, so indexing its result with 0 takes batch element 0, which then broadcasts over the batch.",
            "zh": "每个序列得到的都是第一个序列的注意力输出：这里的 self_attn 直接返回注意力输出 [B, L, D]，而不像 nn.MultiheadAttention 那样返回 (out, weights) 二元组，所以对它的结果取下标 0 取到的是批量中的第 0 个元素，它再广播到整个批量上。",
        },
    },
    "q5": {
        "concatenated": {
            "seen": "the table is the sines of every pair followed by the cosines of every pair, not interleaved",
            "en": "your sines fill the first half of the columns and your cosines the second half: each pair of columns (2i, 2i+1) holds the sine and the cosine of the same angle, side by side.",
            "zh": "你的正弦占了前一半列，余弦占了后一半列：每一对列 (2i, 2i+1) 应当并排放着同一个角度的正弦和余弦。",
        },
        "exponent_doubled": {
            "seen": "the angles equal p / 10000^(2 * 2i / d): the even column index 2i doubled again",
            "en": "your exponent is twice too large: in 2i / d, 2i is already the even column index (0, 2, 4, ...); doubling it again makes the frequencies fall twice as fast.",
            "zh": "你的指数大了一倍：在 2i / d 中，2i 已经是偶数列的下标（0、2、4……）；再乘以 2 会让频率下降得快一倍。",
        },
    },
    "q6": {
        "off_by_one": {
            "seen": "the first real token of a row gets position 1's encoding (a running count of the real tokens, not minus 1), or the index runs past the table",
            "en": "your positions are one too high: a running count of a row's real tokens is 1 at its first real token, whose position is 0 (and a row without padding then asks for position L, past the end of the table).",
            "zh": "你的位置大了 1：对一行的真实词元做累计计数，在第一个真实词元处得到 1，而它的位置是 0（没有填充的一行因此会要位置 L，超出了表的末尾）。",
        },
    },
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
        "in_place": {
            "seen": "the caller's x is changed after the call",
            "en": "your reach moves the token in the very tensor it was given, so the caller's x is no longer the input it passed: move it in a copy and leave the argument as it came.",
            "zh": "你的 reach 直接在传入的张量上移动了词元，于是调用者的 x 不再是它传进来的输入：请在一个副本上移动，让参数保持原样。",
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
