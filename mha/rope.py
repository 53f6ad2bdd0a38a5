"""Rotary position embeddings (RoPE; Su et al., 2021, "RoFormer").

RoPE encodes a token's absolute position ``p`` by *rotating* its query and key: the
``d`` features form ``d/2`` pairs, and pair ``i`` is turned by the angle ``p * theta_i``
with ``theta_i = base^(-2i/d)``. A rotation preserves lengths, and the dot product of a
query rotated by ``p`` with a key rotated by ``s`` depends on ``p - s`` only, so the
attention scores see the *relative* offset although each vector carries its absolute
position.

Layouts (``layout=``). Which two columns form pair ``i`` is a convention:

- ``"half"`` (default): column ``i`` with column ``i + d/2``, the "rotate-half" layout of
  GPT-NeoX and of transformers' Llama (``apply_rotary_pos_emb``).
- ``"interleaved"``: neighbours ``(2i, 2i+1)``, as in the RoFormer paper, Meta's Llama
  reference code (a complex-number view of the pairs) and GPT-J.

Both are the same rotation with the columns of q and k permuted, and the score ``q . k``
is a sum over all columns, so it does not change. A checkpoint trained with one layout
still needs the rows of its ``q``/``k`` projections permuted to run with the other; with
``layout=`` it runs as it was trained.

Longer contexts (``scaling=``). A model trained on sequences of ``trained_len`` tokens
never saw the angles of later positions. Two ways to reuse its weights further out, both
as in transformers' ``rope_parameters["rope_type"]``:

- ``"linear"`` (position interpolation, Chen et al., 2023): every angle is divided by
  ``factor``, so ``factor * trained_len`` positions span the angles the model was trained
  on.
- ``"dynamic"`` (dynamic NTK-aware scaling): for a call whose largest position is
  ``seq_len - 1 >= trained_len`` the base grows to
  ``base * (factor * seq_len / trained_len - (factor - 1)) ** (d / (d - 2))``; fast pairs
  (small ``i``) barely change, the slowest is stretched the most. Shorter inputs use the
  plain base. The base is recomputed on every call from that call's positions, as in
  transformers: while decoding with a cache, keys cached earlier keep the angles they
  were rotated with.
"""
from __future__ import annotations

import torch

from ._checks import shape_str

LAYOUTS = ("half", "interleaved")
SCALINGS = (None, "linear", "dynamic")


def check_rope_options(head_dim: int, layout: str = "half", scaling: str | None = None,
                       factor: float = 1.0, trained_len: int | None = None) -> None:
    """Raise a ``ValueError`` in the learner's words for an impossible RoPE setting."""
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(
            f"RoPE rotates pairs of features, so the head width must be even; got "
            f"head_dim={head_dim}"
        )
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}; got layout={layout!r}")
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}; got scaling={scaling!r}")
    if scaling is not None and not factor >= 1.0:
        raise ValueError(f"a RoPE scaling stretches the context, so factor must be >= 1; "
                         f"got factor={factor}")
    if scaling == "dynamic":
        if trained_len is None or trained_len < 1:
            raise ValueError("scaling='dynamic' needs trained_len, the sequence length the "
                             f"model was trained on; got trained_len={trained_len}")
        if head_dim < 4:
            raise ValueError(f"scaling='dynamic' raises the base to the power d / (d - 2), "
                             f"so head_dim must be at least 4; got head_dim={head_dim}")


def rope_frequencies(head_dim: int, base: float = 10000.0, *, scaling: str | None = None,
                     factor: float = 1.0, trained_len: int | None = None,
                     seq_len: int | None = None, dtype=torch.float32,
                     device=None) -> torch.Tensor:
    """The ``[d/2]`` angular speeds ``theta_i = base^(-2i/d)``, after ``scaling``.

    ``seq_len`` (one more than the largest position) matters for ``"dynamic"`` only.
    """
    check_rope_options(head_dim, "half", scaling, factor, trained_len)
    if scaling == "dynamic" and seq_len is not None and seq_len > trained_len:
        # NTK-aware: a larger base slows the slow pairs down much more than the fast ones
        base = base * (factor * seq_len / trained_len - (factor - 1)) ** (head_dim / (head_dim - 2))
    two_i = torch.arange(0, head_dim, 2, dtype=dtype, device=device)
    theta = 1.0 / base ** (two_i / head_dim)  # [d/2]: one turn every 2*pi / theta_i positions
    if scaling == "linear":
        theta = theta / factor  # position interpolation: p -> p / factor
    return theta


def rope_angles(
    head_dim: int, positions: torch.Tensor, base: float = 10000.0, dtype=torch.float32, *,
    layout: str = "half", scaling: str | None = None, factor: float = 1.0,
    trained_len: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cos, sin)``, each ``[..., L, head_dim]``, for the absolute ``positions`` ``[..., L]``.

    The tables have the layout of the vectors they rotate: with ``layout="half"`` column
    ``i`` and column ``i + head_dim/2`` share the angle ``p * theta_i``; with
    ``"interleaved"`` columns ``2i`` and ``2i+1`` do. They are created on ``positions``'
    device in ``dtype``: float32 (as in transformers) or float64; half precision would
    round large angles.
    """
    check_rope_options(head_dim, layout, scaling, factor, trained_len)
    # "dynamic" picks its base from the largest position of the call
    seq_len = int(positions.max()) + 1 if scaling == "dynamic" and positions.numel() else None
    theta = rope_frequencies(head_dim, base, scaling=scaling, factor=factor,
                             trained_len=trained_len, seq_len=seq_len, dtype=dtype,
                             device=positions.device)
    angle = positions.to(dtype)[..., None] * theta  # [..., L, d/2]
    if layout == "half":
        angle = torch.cat([angle, angle], dim=-1)  # [..., L, d]: pair (i, i + d/2) shares an angle
    else:
        angle = angle.repeat_interleave(2, dim=-1)  # [..., L, d]: pair (2i, 2i+1) shares one
    return angle.cos(), angle.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x1, x2] -> [-x2, x1]`` on the last axis (halves ``x1``, ``x2`` of width ``d/2``).

    This is the 90-degree turn of every pair ``(x[i], x[i + d/2])``; with it a rotation by
    ``a`` is ``x * cos(a) + rotate_half(x) * sin(a)``.
    """
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def rotate_pairs(x: torch.Tensor) -> torch.Tensor:
    """``(x[2i], x[2i+1]) -> (-x[2i+1], x[2i])`` for every neighbouring pair (interleaved).

    The interleaved layout's 90-degree turn: ``[a, b, c, d] -> [-b, a, -d, c]``.
    """
    pairs = x.unflatten(-1, (-1, 2))  # [..., d/2, 2]
    return torch.stack([-pairs[..., 1], pairs[..., 0]], dim=-1).flatten(-2)


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, *,
               layout: str = "half", scaling: str | None = None, factor: float = 1.0,
               trained_len: int | None = None) -> torch.Tensor:
    """Rotate ``x`` ``[..., L, d]`` by the angles of its absolute ``positions``.

    ``positions`` is ``[L]`` (one position per row, shared by the batch) or ``[B, L]`` for
    ``x`` ``[B, H, L, d]`` (each sequence its own positions, e.g. left-padded batches).
    Pair ``i`` of the vector at position ``p`` is rotated by ``p * base^(-2i/d)``; see
    the module docstring for ``layout`` and for ``scaling``/``factor``/``trained_len``.
    With ``layout="half"`` this equals transformers' Llama ``apply_rotary_pos_emb``. With a
    KV cache the new tokens' positions start at the number of cached tokens, not at 0.
    Returns a tensor of ``x``'s shape and dtype; the tables are built on ``x``'s device in
    ``x``'s dtype, raised to at least float32.
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
    per_row = positions.dim() == 2 and x.dim() == 4 and positions.shape[0] == x.shape[0]
    if (positions.dim() != 1 and not per_row) or positions.shape[-1] != L \
            or positions.is_floating_point():
        raise ValueError(
            f"positions must be an integer tensor [L], or [B, L] for x [B, H, L, d], with one "
            f"position per row of x (L={L}); got {positions.dtype} of shape "
            f"{shape_str(positions)} for x of shape {shape_str(x)}"
        )
    dtype = torch.promote_types(x.dtype, torch.float32)  # at least float32 (half rounds angles)
    cos, sin = rope_angles(d, positions, base, dtype, layout=layout, scaling=scaling,
                           factor=factor, trained_len=trained_len)  # [L, d] or [B, L, d]
    if per_row:
        cos, sin = cos[:, None], sin[:, None]  # [B, 1, L, d]: the same angles for every head
    turn = rotate_half if layout == "half" else rotate_pairs
    x_ = x.to(dtype)
    return (x_ * cos + turn(x_) * sin).to(x.dtype)
