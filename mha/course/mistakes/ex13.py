"""Exercise 13, positions: the classic mistakes, question by question.

Edit freely: ``seen`` says how the checks recognise the mistake (the learner's result equals the
reference with the mistake applied), ``en``/``zh`` is the hint. A hint names the mistake and the
idea to check, never the code that fixes it. A new mistake also needs a planted bug in
grading/known_bugs.py (feedback "mistake:<id>") and its value in the question's test.
"""

from .classics import NO_SCALE, SOFTMAX_AXIS

MISTAKES = {
    "q2": {
        "no_scale": NO_SCALE,
        "softmax_axis": SOFTMAX_AXIS,
    },
}
