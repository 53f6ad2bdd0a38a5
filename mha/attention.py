"""Scaled dot-product attention, written out step by step."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._checks import check_attn_bias, check_mask, shape_str


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    attn_bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k) + bias) v, returning the output and the attention weights.

    Args:
        q: queries ``[..., L, d_k]``.
        k: keys ``[..., S, d_k]`` (same ``d_k`` as the queries).
        v: values ``[..., S, d_v]`` (same length ``S`` as the keys).
        mask: optional boolean mask broadcastable to ``[..., L, S]``;
            ``True`` means "this query may attend to this key" (the convention of
            ``F.scaled_dot_product_attention``; ``nn.MultiheadAttention`` uses the opposite).
        dropout_p: probability of dropping an attention weight; the kept weights are
            scaled by ``1 / (1 - dropout_p)`` so that their expected value is unchanged.
            Pass 0 in eval mode (this function does not know the module's mode).
        attn_bias: optional float tensor broadcastable to ``[..., L, S]``, added to the
            scaled scores before the mask (ALiBi's distance penalty, for example).

    Returns:
        ``(out, weights)`` with ``out`` ``[..., L, d_v]`` and ``weights`` ``[..., L, S]``.
        A query whose keys are all masked gets zero weights and a zero output (never NaN).
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"query and key must have the same last dimension d_k: q {shape_str(q)} has "
            f"d_k={q.shape[-1]} but k {shape_str(k)} has d_k={k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"key and value must have the same length S: k {shape_str(k)} has "
            f"S={k.shape[-2]} but v {shape_str(v)} has S={v.shape[-2]}"
        )
    L, S, d_k = q.shape[-2], k.shape[-2], q.shape[-1]

    # [..., L, d_k] @ [..., d_k, S] -> [..., L, S]. True division: `//` would floor
    # every score to an integer and silently destroy the attention pattern.
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)

    if attn_bias is not None:
        check_attn_bias(attn_bias, scores.shape, L=L, S=S)
        scores = scores + attn_bias

    if mask is not None:
        check_mask(mask, scores.shape, L=L, S=S)
        # The most negative finite number, not -inf: a fully masked row then gives a
        # uniform softmax instead of NaN (0/0), and we zero that row just below.
        # (-1e9 is no better: it overflows to -inf in float16.)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)

    weights = torch.softmax(scores, dim=-1)  # over the keys: each row sums to 1

    if mask is not None:
        has_any_key = mask.any(dim=-1, keepdim=True)  # [..., L, 1]
        weights = weights * has_any_key

    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)

    # A matrix product, not an element-wise one: [..., L, S] @ [..., S, d_v] -> [..., L, d_v]
    return weights @ v, weights
