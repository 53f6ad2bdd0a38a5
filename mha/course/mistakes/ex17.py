"""Exercise 17, attention as 2025's models use it: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

MISTAKES = {
    "q1": {
        "rope_on_latent": {
            "seen": "the latent equals the reference's latent rotated by RoPE",
            "en": "RoPE was applied to the latent, the content part: only the separate RoPE part is rotated. A rotated latent could not be turned into every head's key by one up-projection, which is why MLA splits the two.",
            "zh": "你对潜在向量（内容部分）也施加了 RoPE：只有单独的 RoPE 部分才旋转。旋转过的潜在向量无法再用一次上投影变成每个头的键，这正是 MLA 把两部分分开的原因。",
        },
        "latent_not_normed": {
            "seen": "the latent equals the down-projection's output without the RMSNorm",
            "en": "the latent is cached after its normalisation: the down-projection's output goes through the layer's RMSNorm first.",
            "zh": "缓存的是归一化之后的潜在向量：下投影的输出要先经过该层的 RMSNorm。",
        },
        "rope_missing": {
            "seen": "the RoPE key equals the down-projection's RoPE part, not rotated",
            "en": "the RoPE part of the key is not rotated: MLA caches it already rotated by its token's position, so that it is never rotated again.",
            "zh": "键的 RoPE 部分没有旋转：MLA 缓存的是已按其词元位置旋转过的 RoPE 部分，之后不再旋转。",
        },
    },
    "q2": {
        "measure_off_by_one": {
            "seen": "the position returned is one before the earliest that changes the output",
            "en": "off by one: you returned a position whose change leaves the output as it was; the question asks for the earliest position that does change it.",
            "zh": "差了一位：你返回的位置改变之后输出并没有变化；题目要的是最早的、改变之后确实会改变输出的位置。",
        },
        "whole_output": {
            "seen": "the position returned is 0 (a change anywhere in the output counts)",
            "en": "you compared the whole output, so a change at any later position counts: compare only the output at `position`.",
            "zh": "你比较的是整个输出，于是任何更靠后位置的变化都算上了：只比较 `position` 处的输出。",
        },
    },
    "q3": {
        "sink_given_value": {
            "seen": "the output equals the reference's plus the sink's weight times the first value",
            "en": "the sink was given a value: it takes its share of the weight but must add nothing to the output.",
            "zh": "你给注意力汇赋了一个值：它分走一份权重，但不应给输出增加任何东西。",
        },
        "sink_scaled": {
            "seen": "the output and weights equal the reference's with the sink logits divided by sqrt(d_k)",
            "en": "the sink logit was scaled by 1/sqrt(d_k): it is learned on the scale of the scaled scores and joins the softmax as it is.",
            "zh": "你把汇 logit 也乘了 1/sqrt(d_k)：它是在缩放后分数的尺度上学到的，按原样加入 softmax。",
        },
    },
}
