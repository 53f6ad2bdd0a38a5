"""Exercise 10, efficient attention: the classic mistakes, question by question.

Edit freely: ``seen`` says how the checks recognise the mistake (the learner's result equals the
reference with the mistake applied), ``en``/``zh`` is the hint. A hint names the mistake and the
idea to check, never the code that fixes it. A new mistake also needs a planted bug in
grading/known_bugs.py (feedback "mistake:<id>") and its value in the question's test.
"""


MISTAKES = {
    "q2": {
        "no_scale": {
            "seen": "the output equals attention without the 1/sqrt(d_k) scale",
            "en": "the scores are not scaled: each block's dot products must be multiplied by the given scale before the running maximum and exp.",
            "zh": "分数没有缩放：每个块的点积都要先乘以给定的缩放因子，再参与滑动最大值和 exp 的计算。",
        },
    },
}
