"""Exercise 7, decoding: the classic mistakes, question by question.

Edit freely: what each field means, and what a new mistake also needs, is in ``__init__.py``.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q4": {
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
    },
    "q6": {
        "too_early": {
            "seen": "a row holds eos_id among its first min_len tokens after bos_id",
            "en": "a row ends too early: eos_id appears among its first min_len tokens after bos_id. Count which decoding steps write those tokens, and keep eos_id out of the choice at every one of them.",
            "zh": "有一行结束得太早：eos_id 出现在 bos_id 之后的前 min_len 个词元之中。数一数哪些解码步写出这些词元，并在其中的每一步都把 eos_id 排除在候选之外。",
        },
    },
}
