"""Exercise 3, masking: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q1": {
        "inverted_mask": {
            "seen": "the mask equals the reference's negation",
            "en": "your mask is inverted: True must mean 'may attend' (you marked the blocked keys).",
            "zh": "你的掩码反了：True 必须表示“可以关注”（你标记的是被屏蔽的键）。",
        },
        "misaligned_mask": {
            "seen": "for L < S the mask equals the causal mask aligned top-left (query i sees keys 0..i)",
            "en": "the L queries are the *last* L of the S positions, not the first L: which is the last key query 0 may see?",
            "zh": "L 个查询是 S 个位置中的*最后* L 个，而不是最前面的 L 个：查询 0 最多能看到哪个键？",
        },
    },
    "q3": {
        "inverted_mask": {
            "seen": "the weights equal the reference's with the mask negated",
            "en": "the mask is inverted: you blocked the keys the mask allows. True means 'may attend'.",
            "zh": "掩码反了：你屏蔽了掩码允许的键。True 表示“可以关注”。",
        },
        "no_scale": {
            "seen": "the weights equal the reference's without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled: each dot product is divided by the square root of the key width d_k, so that the softmax does not saturate as d_k grows.",
            "zh": "分数没有缩放：每个点积都要除以键宽度 d_k 的平方根，这样 softmax 才不会随 d_k 增大而饱和。",
        },
        "softmax_axis": {
            "seen": "the weights equal the reference's with the softmax over the queries",
            "en": "the softmax runs over the wrong axis: each query's weights (one row, over the keys) must sum to 1.",
            "zh": "softmax 的轴不对：每个查询的注意力权重（一行，在键上）之和必须为 1。",
        },
    },
    "q4": {
        "inverted_mask": {
            "seen": "the mask equals the reference's negation",
            "en": "your mask is inverted: True must mean 'may attend', a key in the past that is a real token.",
            "zh": "你的掩码反了：True 必须表示“可以关注”，即一个位于过去、又是真实词元的键。",
        },
    },
    "q6": {
        "too_wide": {
            "seen": "each query sees window + 1 positions",
            "en": "each query sees one position too many: the window counts the query's own position, so it holds exactly `window` keys.",
            "zh": "每个查询多看了一个位置：窗口把查询自己的位置也算在内，所以它恰好包含 `window` 个键。",
        },
        "top_left": {
            "seen": "the queries are placed at positions 0 .. L - 1 instead of the last L of S",
            "en": "your queries sit at positions 0 .. L - 1; they are the last L of the S positions (bottom-right, as in question 1), so the first query sits at S - L.",
            "zh": "你的查询位于位置 0 .. L - 1；它们应是 S 个位置中的最后 L 个（右下对齐，与第 1 题相同），所以第一个查询位于 S - L。",
        },
        "inverted_mask": {
            "seen": "the mask equals the reference's negation",
            "en": "your mask is inverted: True must mean that the query may attend to the key.",
            "zh": "你的掩码反了：True 必须表示查询可以关注这个键。",
        },
    },
}
