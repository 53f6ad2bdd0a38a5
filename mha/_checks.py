"""Input validation shared by the package.

Every check raises ``ValueError`` with a message that names the argument, the value it
had and what was expected, so that a learner sees *why* a call is wrong instead of a
cryptic reshape failure or a silent NaN several layers later.
"""
from __future__ import annotations

import torch


def shape_str(t: torch.Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def check_num_heads(d_model: int, num_heads: int) -> int:
    """Return ``head_dim = d_model // num_heads`` after checking that the split is exact."""
    if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive integer, got num_heads={num_heads!r}")
    if not isinstance(d_model, int) or isinstance(d_model, bool) or d_model <= 0:
        raise ValueError(f"d_model must be a positive integer, got d_model={d_model!r}")
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: "
            f"each head needs head_dim = d_model / num_heads columns "
            f"(e.g. d_model={num_heads * max(1, d_model // num_heads)} would give "
            f"head_dim={max(1, d_model // num_heads)})"
        )
    return d_model // num_heads


def check_3d(x: torch.Tensor, name: str, letters: str = "[B, L, D]") -> None:
    if x.dim() != 3:
        hint = " Add a batch dimension with x.unsqueeze(0)." if x.dim() == 2 else ""
        raise ValueError(
            f"{name} must be a 3-D tensor {letters}; got a {x.dim()}-D tensor of shape "
            f"{shape_str(x)}.{hint}"
        )


def check_mask(mask: torch.Tensor, scores_shape: torch.Size, *, L: int, S: int) -> None:
    """A mask must be boolean and broadcast to the scores ``[..., L, S]``."""
    if mask.dtype != torch.bool:
        raise ValueError(
            f"mask must be a boolean tensor (True = this query may attend to this key), "
            f"got dtype {mask.dtype}. Convert a 0/1 mask with mask.bool(), or an additive "
            f"float mask (0 = keep, -inf = block) with mask == 0."
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores_shape:
        raise ValueError(
            f"mask of shape {shape_str(mask)} does not broadcast to the attention scores "
            f"[..., L, S] = {list(scores_shape)} (L={L} queries, S={S} keys). "
            f"A mask's last two dimensions must be (L or 1, S or 1)."
        )
