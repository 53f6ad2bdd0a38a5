"""Input validation shared by the package.

Every check raises ``ValueError`` with a message that names the argument, the value it
had and what was expected, so that a learner sees *why* a call is wrong instead of a
cryptic reshape failure or a silent NaN several layers later.

The checks run at public entry points, once per call, and use plain Python comparisons
of shapes: they run hundreds of times in a decoding loop, so they must cost microseconds.
"""
from __future__ import annotations

import torch


def shape_str(t: torch.Tensor) -> str:
    """``[2, 3, 8]``: a shape as the course writes it."""
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _is_positive_int(n) -> bool:
    # bool is a subclass of int: num_heads=True must not pass as 1
    return isinstance(n, int) and not isinstance(n, bool) and n > 0


def check_num_heads(d_model: int, num_heads: int) -> int:
    """Return ``head_dim = d_model // num_heads`` after checking that the split is exact."""
    if not _is_positive_int(num_heads):
        raise ValueError(f"num_heads must be a positive integer, got num_heads={num_heads!r}")
    if not _is_positive_int(d_model):
        raise ValueError(f"d_model must be a positive integer, got d_model={d_model!r}")
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: "
            f"each head needs head_dim = d_model / num_heads columns "
            f"(e.g. d_model={num_heads * max(1, d_model // num_heads)} would give "
            f"head_dim={max(1, d_model // num_heads)})"
        )
    return d_model // num_heads


def check_num_kv_heads(num_heads: int, num_kv_heads: int) -> int:
    """``num_kv_heads`` must split the ``num_heads`` query heads into equal groups."""
    if not _is_positive_int(num_kv_heads) or num_heads % num_kv_heads:
        raise ValueError(
            f"num_kv_heads={num_kv_heads!r} must be a positive divisor of "
            f"num_heads={num_heads}, so that query heads form equal groups"
        )
    return num_kv_heads


def check_3d(x: torch.Tensor, name: str, letters: str = "[B, L, D]") -> None:
    if x.dim() != 3:
        hint = " Add a batch dimension with x.unsqueeze(0)." if x.dim() == 2 else ""
        raise ValueError(
            f"{name} must be a 3-D tensor {letters}; got a {x.dim()}-D tensor of shape "
            f"{shape_str(x)}.{hint}"
        )


def check_features(x: torch.Tensor, d: int, who: str) -> None:
    """A normalisation layer built for ``d`` features needs inputs ``[..., d]``."""
    if x.dim() < 1 or x.shape[-1] != d:
        raise ValueError(
            f"{who} was built for d={d} features but got an input of shape "
            f"{list(x.shape)} whose last dimension is {x.shape[-1] if x.dim() else 'missing'}"
        )


def _broadcasts_to(shape: torch.Size, target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to exactly ``target`` (never beyond it)."""
    return len(shape) <= len(target) and all(
        m == 1 or m == n for m, n in zip(reversed(shape), reversed(target)))


def check_mask(mask: torch.Tensor, scores_shape: tuple[int, ...], *, L: int, S: int) -> None:
    """A mask must be boolean and broadcast to the scores ``[..., L, S]``."""
    if mask.dtype != torch.bool:
        raise ValueError(
            f"mask must be a boolean tensor (True = this query may attend to this key), "
            f"got dtype {mask.dtype}. Convert a 0/1 mask with mask.bool(), or an additive "
            f"float mask (0 = keep, -inf = block) with mask == 0."
        )
    if not _broadcasts_to(mask.shape, scores_shape):
        raise ValueError(
            f"mask of shape {shape_str(mask)} does not broadcast to the attention scores "
            f"[..., L, S] = {list(scores_shape)} (L={L} queries, S={S} keys). "
            f"A mask's last two dimensions must be (L or 1, S or 1)."
        )


def check_attn_bias(bias: torch.Tensor, scores_shape: tuple[int, ...], *, L: int, S: int) -> None:
    """An additive bias (e.g. ALiBi) must be floating point and broadcast to the scores."""
    if not bias.is_floating_point():
        raise ValueError(
            f"attn_bias must be a floating-point tensor added to the scores, got dtype "
            f"{bias.dtype}; a boolean 'may attend' tensor belongs in mask="
        )
    if not _broadcasts_to(bias.shape, scores_shape):
        raise ValueError(
            f"attn_bias of shape {shape_str(bias)} does not broadcast to the attention scores "
            f"[..., L, S] = {list(scores_shape)} (L={L} queries, S={S} keys)."
        )
