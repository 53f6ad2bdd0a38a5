"""Learned attention sinks (gpt-oss, 2025): one extra logit per head in the softmax.

A softmax must hand out a total weight of 1, even when no key is relevant. Trained models
solve this by dumping the spare weight on some token, usually the first (StreamingLLM's
"attention sinks"). gpt-oss gives every head a learned logit ``s_h`` that joins the
softmax of every query as if it were one more key, but one *without a value*:

    weights = softmax([scores, s_h])[:-1]   (they now sum to less than 1)

Here that phantom key is built literally: a key of zeros (its score ``q . 0`` is 0), the
bias ``s_h`` added to that score, and a value of zeros, so it takes weight from the real
keys and adds nothing to the output. StreamingLLM's other remedy, keeping the first tokens
inside a sliding window, is ``keep_first`` in :mod:`mha.windows`.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import check_3d, shape_str
from .attention import scaled_dot_product_attention
from .heads import merge_heads, repeat_kv, split_heads
from .multihead import MultiHeadAttention
from .rope import apply_rope


def attention_with_sinks(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                         sinks: torch.Tensor, mask: torch.Tensor | None = None,
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention with one sink logit per head.

    Args:
        q: queries ``[B, H, L, d_k]``; k: keys ``[B, H, S, d_k]``; v: values ``[B, H, S, d_v]``.
        sinks: ``[H]``, head ``h``'s sink logit (on the scale of the scaled scores).
        mask: optional boolean mask broadcastable to ``[B, H, L, S]``, ``True`` = may attend.

    Returns ``(out [B, H, L, d_v], weights [B, H, L, S])``; each row of ``weights`` sums to
    ``1 - (the sink's share)``, which is less than 1.
    """
    H, L, S = q.shape[-3], q.shape[-2], k.shape[-2]
    if sinks.shape != (H,):
        raise ValueError(f"sinks must hold one logit per head, shape [{H}] for q of shape "
                         f"{shape_str(q)}; got shape {shape_str(sinks)}")
    zeros_k = k.new_zeros(*k.shape[:-2], 1, k.shape[-1])
    zeros_v = v.new_zeros(*v.shape[:-2], 1, v.shape[-1])
    k = torch.cat([k, zeros_k], dim=-2)  # [B, H, S + 1, d_k]: q . 0 = 0 for every query
    v = torch.cat([v, zeros_v], dim=-2)  # the sink's value: it adds nothing to the output
    bias = torch.cat([q.new_zeros(H, L, S),  # the real keys: no bias
                      sinks.to(q.dtype).view(H, 1, 1).expand(H, L, 1)], dim=-1)  # [H, L, S + 1]
    if mask is not None:
        mask = mask.expand(*mask.shape[:-2], L, S)  # a [.., 1, S] mask: one row per query
        mask = torch.cat([mask, mask.new_ones(*mask.shape[:-1], 1)], dim=-1)  # sink visible
    out, weights = scaled_dot_product_attention(q, k, v, mask, attn_bias=bias)
    return out, weights[..., :-1]  # the sink's own weight is dropped, as its value is zero


class SinkAttention(MultiHeadAttention):
    """Causal self-attention with RoPE, grouped-query heads and learned sinks (gpt-oss).

    The projections, RoPE and head grouping are those of :class:`mha.MultiHeadAttention`
    (same arguments; ``rope_base`` is required); ``sinks`` ``[H]`` is the one new
    parameter. Pass a sliding-window mask (:func:`mha.sliding_window_mask`) for gpt-oss'
    local layers and :func:`mha.causal_mask` for its global ones.
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int | None = None,
                 rope_base: float = 10000.0, bias: bool = True):
        super().__init__(d_model, num_heads, bias=bias, num_kv_heads=num_kv_heads,
                         rope_base=rope_base)
        self.sinks = nn.Parameter(torch.zeros(num_heads))  # zero logit: weight e^0 = 1 "token"

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, cache=None,
                positions: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` ``[B, L, D]`` -> ``(out [B, L, D], weights [B, H, L, S])``; ``cache`` a
        :class:`mha.KVCache` or :class:`mha.RollingKVCache`; ``positions`` ``[L]`` default to
        ``len(cache), ...``."""
        check_3d(x, "x")
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x has d_model={x.shape[-1]} (shape {shape_str(x)}) but this "
                             f"SinkAttention was built with d_model={self.d_model}")
        L = x.shape[1]
        if positions is None:
            start = 0 if cache is None else len(cache)
            positions = torch.arange(start, start + L, device=x.device)
        q = split_heads(self.q_proj(x), self.num_heads)  # [B, H, L, d_k]
        k = split_heads(self.k_proj(x), self.num_kv_heads)  # [B, H_kv, L, d_k]
        v = split_heads(self.v_proj(x), self.num_kv_heads)
        q = apply_rope(q, positions, self.rope_base, **self.rope_options)
        k = apply_rope(k, positions, self.rope_base, **self.rope_options)
        if cache is not None:
            k, v = cache.update(k, v)  # [B, H_kv, S, d_k]
        group = self.num_heads // self.num_kv_heads
        out, weights = attention_with_sinks(q, repeat_kv(k, group), repeat_kv(v, group),
                                            self.sinks, mask)
        return self.o_proj(merge_heads(out)), weights

    @classmethod
    def from_transformers(cls, hf_attention) -> SinkAttention:
        """Ours, with the weights of a transformers ``GptOssAttention`` (default RoPE)."""
        c = hf_attention.config
        rope = c.rope_parameters or {}
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"only default RoPE is supported; got rope_type="
                             f"{rope.get('rope_type')!r}")
        if c.num_attention_heads * hf_attention.head_dim != c.hidden_size:
            raise ValueError(  # gpt-oss-120b itself: 64 heads of 64 in a width of 2880
                f"ours splits d_model into the heads, so hidden_size must equal num_heads * "
                f"head_dim; got {c.hidden_size} != {c.num_attention_heads} * {hf_attention.head_dim}")
        ours = cls(c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
                   float(rope.get("rope_theta", 10000.0)), bias=c.attention_bias)
        ours.load_state_dict(hf_attention.state_dict())  # strict: same names and shapes
        return ours.to(next(hf_attention.parameters()).dtype)
