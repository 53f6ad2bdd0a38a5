"""Course scaffolding, not attention: the running example, the numerals task, the text
corpus, the small training loops, plotting helpers, and for the exercises their feedback
checks, reference implementations built from ``mha`` (``references``), the planted bugs
of the debugging exercise (``planted_bugs``) and the capstone's training and evaluation
(``capstone``).

The attention code itself lives one level up, in ``mha``.
"""
