"""Exercise 9, debugging attention: the classic mistakes, question by question.

Edit freely: ``seen`` says how the checks recognise the mistake (the learner's result equals the
reference with the mistake applied), ``en``/``zh`` is the hint. A hint names the mistake and the
idea to check, never the code that fixes it. A new mistake also needs a planted bug in
grading/known_bugs.py (feedback "mistake:<id>") and its value in the question's test.
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
}
