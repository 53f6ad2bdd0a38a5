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


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """``[B, H_kv, S, d] -> [B, H_kv * n_rep, S, d]``: each key/value head copied to its group.

    Grouped-query attention shares one key/value head among ``n_rep`` query heads. Query
    head ``h`` reads key/value head ``h // n_rep``, so the copies must sit next to each
    other, ``[K1, K2] -> [K1, K1, K2, K2]``: this equals
    ``x.repeat_interleave(n_rep, dim=1)`` (``x.repeat(1, n_rep, 1, 1)`` would give
    ``[K1, K2, K1, K2]``, the wrong pairing).
    """
    if n_rep == 1:
        return x
    B, H_kv, S, d = x.shape
    # expand makes n_rep views of each head without copying; reshape then copies once
    return x[:, :, None].expand(B, H_kv, n_rep, S, d).reshape(B, H_kv * n_rep, S, d)
