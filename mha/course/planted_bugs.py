"""Attention with a planted bug, for exercise 9's checks of the tests a learner writes.

Exercise 9 shows ``buggy_attention``, which has three bugs, and asks for a test per bug that
fails on an attention with that bug and passes on a correct one. Its checks run the learner's
test on ``attention_with_bug(None)`` (correct) and on ``attention_with_bug(bug)`` for each
bug in ``BUGS``, the three of ``buggy_attention``, one at a time.
"""
from __future__ import annotations

import math

import torch

BUGS = {
    "floor_division": "the scores are divided by sqrt(d_k) with // instead of /",
    "softmax_axis": "the softmax runs over the queries (dim=-2) instead of the keys",
    "mask_polarity": "the mask blocks the keys it should allow (True = may attend)",
}


def attention_with_bug(bug: str | None = None, *, einsum: bool = False):
    """``attention(q, k, v, mask=None) -> (out, weights)`` with one bug of ``BUGS`` planted.

    ``bug=None`` gives the correct attention of the exercise's contract: ``q`` ``[..., L, d_k]``,
    ``k`` ``[..., S, d_k]``, ``v`` ``[..., S, d_v]``, a boolean ``mask`` broadcastable to
    ``[..., L, S]`` with ``True`` = may attend, and zero weights for a query whose keys are all
    blocked. ``einsum=True`` computes the scores with ``torch.einsum``: the same function,
    written differently, which a test of behaviour must not tell apart.
    """
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r}; expected None or one of {sorted(BUGS)}")

    def attention(q, k, v, mask=None):
        if einsum:
            scores = torch.einsum("...ld,...sd->...ls", q, k)  # [..., L, S]
        else:
            scores = q @ k.transpose(-2, -1)                    # [..., L, S]
        scale = math.sqrt(q.shape[-1])
        scores = scores // scale if bug == "floor_division" else scores / scale
        if mask is not None:
            scores = scores.masked_fill(mask if bug == "mask_polarity" else ~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2 if bug == "softmax_axis" else -1)
        weights = torch.nan_to_num(weights, nan=0.0)  # rows with every key blocked: 0/0 -> 0
        return weights @ v, weights

    return attention
