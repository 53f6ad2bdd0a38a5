"""The mutants of exercise 9's question 5, which the learner never sees.

Question 5 asks for one test that also catches bugs nobody has shown. Its hidden test runs the
learner's test on the mutants below; they live here, in the grader, and not in the installed
``mha`` package or the public tests, so that a student's copy of the course does not list
them. (The three bugs the exercise does show are ``mha.course.planted_bugs``.)

Each mutant is the correct attention of ``mha.course.planted_bugs`` with one change, written
as a change of its inputs or of its output where it can be, so the attention itself stays
written once: scaling ``q`` by ``c`` scales the scores by ``c`` (``(c q) k^T = c (q k^T)``).
The last three are wrong only where a test must look (issue 31: tests that never tried them
were accepted): a query whose keys are all blocked, large scores, a single query.
"""
from __future__ import annotations

import math

import torch

from mha.course.planted_bugs import attention_with_bug

UNSEEN_BUGS = {
    "sqrt_S": "a mutant that scales by sqrt(S) instead of sqrt(d_k)",
    "values_from_keys": "a mutant that averages the keys instead of the values",
    "mask_ignored": "a mutant that ignores the mask",
    "no_scaling": "a mutant without the 1/sqrt(d_k) scaling",
    "nan_when_blocked": "a mutant that gives nan for a query whose keys are all blocked",
    "overflow": "a mutant whose softmax overflows on large scores (no maximum subtracted)",
    "one_query": "a mutant that is wrong only when there is a single query (L = 1)",
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
        if bug == "one_query" and q.shape[-2] == 1:  # uniform weights: the scores are lost
            return correct(q * 0, k, v, mask)
        if bug == "one_query":
            return correct(q, k, v, mask)
        if bug == "overflow":  # exp of the scores as they are, then normalised
            scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = (scores.exp() / scores.exp().sum(-1, keepdim=True)).nan_to_num(0.0)
            return weights @ v, weights
        if bug == "nan_when_blocked":  # 0 / 0 left as it is
            out, weights = correct(q, k, v, mask)
            if mask is None:
                return out, weights
            blocked = ~mask.any(dim=-1, keepdim=True)  # [..., L, 1]
            return (torch.where(blocked, float("nan"), out),
                    torch.where(blocked, float("nan"), weights))
        out, weights = correct(q, k, v, mask)  # values_from_keys
        return weights @ k, weights

    return attention
