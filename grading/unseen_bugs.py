"""The mutants of exercise 9's question 5, which the learner never sees.

Question 5 asks for one test that also catches bugs nobody has shown. Its hidden test runs the
learner's test on the mutants below; they live here, in the grader, and not in the installed
``mha`` package or the public tests, so that a student's copy of the course does not list
them. (The three bugs the exercise does show are ``mha.course.planted_bugs``.)

Each mutant is the correct attention of ``mha.course.planted_bugs`` with one change, written
as a change of its inputs or of its output, so the attention itself stays written once:
scaling ``q`` by ``c`` scales the scores by ``c`` (``(c q) k^T = c (q k^T)``).
"""
from __future__ import annotations

import math

from mha.course.planted_bugs import attention_with_bug

UNSEEN_BUGS = {
    "sqrt_S": "a mutant that scales by sqrt(S) instead of sqrt(d_k)",
    "values_from_keys": "a mutant that averages the keys instead of the values",
    "mask_ignored": "a mutant that ignores the mask",
    "no_scaling": "a mutant without the 1/sqrt(d_k) scaling",
}


def attention_with_unseen_bug(bug: str):
    """``attention(q, k, v, mask=None) -> (out, weights)`` with the mutant ``bug`` of
    ``UNSEEN_BUGS``."""
    if bug not in UNSEEN_BUGS:
        raise ValueError(f"unknown mutant {bug!r}; expected one of {sorted(UNSEEN_BUGS)}")
    correct = attention_with_bug(None)

    def attention(q, k, v, mask=None):
        d_k, S = q.shape[-1], k.shape[-2]
        if bug == "sqrt_S":      # scores q k^T / sqrt(S)
            return correct(q * math.sqrt(d_k / S), k, v, mask)
        if bug == "no_scaling":  # scores q k^T
            return correct(q * math.sqrt(d_k), k, v, mask)
        if bug == "mask_ignored":
            return correct(q, k, v, None)
        out, weights = correct(q, k, v, mask)  # values_from_keys
        return weights @ k, weights

    return attention
