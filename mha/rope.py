"""Rotary position embeddings (RoPE; Su et al., 2021, "RoFormer").

RoPE encodes a token's absolute position ``p`` by *rotating* its query and key: the
``d`` features form ``d/2`` pairs, and pair ``i`` is turned by the angle ``p * theta_i``
with ``theta_i = base^(-2i/d)``. A rotation preserves lengths, and the dot product of a
query rotated by ``p`` with a key rotated by ``s`` depends on ``p - s`` only, so the
attention scores see the *relative* offset although each vector carries its absolute
position.

Layout. We pair column ``i`` with column ``i + d/2`` (the "rotate-half" layout of GPT-NeoX
and of transformers' Llama, ``apply_rotary_pos_emb``). The paper pairs neighbours
``(2i, 2i+1)`` ("interleaved"); the two are the same rotation with the columns of q and
k permuted, and since the score ``q . k`` is a sum over all columns it does not change.
A checkpoint trained with one layout needs its ``q``/``k`` projection rows permuted to
run with the other.
"""
from __future__ import annotations

import torch

from ._checks import shape_str


def rope_angles(
    head_dim: int, positions: torch.Tensor, base: float = 10000.0, dtype=torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cos, sin)``, each ``[L, head_dim]``, for the absolute ``positions`` ``[L]``.

    Column ``i`` and column ``i + head_dim/2`` share the angle ``p * base^(-2i/head_dim)``,
    so the table has the same layout as the vectors it rotates. ``dtype`` float32 (as in
    transformers) or float64; half precision would round large angles.
    """
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(
            f"RoPE rotates pairs of features, so the head width must be even; got "
            f"head_dim={head_dim}"
        )
    two_i = torch.arange(0, head_dim, 2, dtype=dtype, device=positions.device)
    theta = 1.0 / base ** (two_i / head_dim)  # [d/2]: one turn every 2*pi / theta_i positions
    angle = positions.to(dtype)[:, None] * theta[None, :]  # [L, d/2]
    angle = torch.cat([angle, angle], dim=-1)  # [L, d]: pair (i, i + d/2) shares an angle
    return angle.cos(), angle.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x1, x2] -> [-x2, x1]`` on the last axis (halves ``x1``, ``x2`` of width ``d/2``).

    This is the 90-degree turn of every pair ``(x[i], x[i + d/2])``; with it a rotation by
    ``a`` is ``x * cos(a) + rotate_half(x) * sin(a)``.
    """
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate ``x`` ``[..., L, d]`` by the angles of its absolute ``positions`` ``[L]``.

    Pair ``(i, i + d/2)`` of the vector at position ``p`` is rotated by ``p * base^(-2i/d)``.
    Equals transformers' Llama ``apply_rotary_pos_emb`` on queries and keys. With a KV
    cache the new tokens' positions start at the number of cached tokens, not at 0.
    Returns a tensor of ``x``'s shape and dtype.
    """
    if x.dim() < 2:
        raise ValueError(f"apply_rope needs x of shape [..., L, d]; got shape {shape_str(x)}")
    L, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(
            f"apply_rope rotates pairs of features, so the last dimension of x must be even; "
            f"got x of shape {shape_str(x)} with d={d}"
        )
    positions = torch.as_tensor(positions, device=x.device)
    if positions.dim() != 1 or positions.shape[0] != L or positions.is_floating_point():
        raise ValueError(
            f"positions must be an integer tensor [L] with one position per row of x "
            f"(L={L}); got {positions.dtype} of shape {shape_str(positions)}"
        )
    dtype = torch.promote_types(x.dtype, torch.float32)  # at least float32 (half rounds angles)
    cos, sin = rope_angles(d, positions, base, dtype)  # [L, d] each
    x_ = x.to(dtype)
    return (x_ * cos + rotate_half(x_) * sin).to(x.dtype)
