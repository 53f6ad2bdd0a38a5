"""Splitting the model dimension into heads, and merging the heads back."""
from __future__ import annotations

import torch

from ._checks import check_3d, check_num_heads, shape_str


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``[B, L, D] -> [B, H, L, D/H]``; head ``i`` holds columns ``i*d : (i+1)*d`` of ``D``.

    ``view(B, L, H, d)`` keeps each head's ``d`` columns contiguous; the transpose then
    moves the head axis next to the batch so every head is an independent
    ``[L, d]`` attention problem.
    """
    check_3d(x, "x")
    B, L, D = x.shape
    head_dim = check_num_heads(D, num_heads)
    return x.view(B, L, num_heads, head_dim).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``[B, H, L, d] -> [B, L, H*d]``, the inverse of :func:`split_heads`."""
    if x.dim() != 4:
        raise ValueError(
            f"merge_heads expects a 4-D tensor [B, H, L, d]; got shape {shape_str(x)}"
        )
    B, H, L, d = x.shape
    # transpose makes the tensor non-contiguous, so reshape (which copies) and not view
    return x.transpose(1, 2).reshape(B, L, H * d)
