"""Multi-head latent attention (MLA; DeepSeek-V2, 2024), as in DeepSeek-V3 and Kimi K2.

Grouped-query attention shrinks the KV cache by sharing key/value heads. MLA instead
compresses every token into one small *latent* vector ``c`` of ``kv_lora_rank`` features
(``kv_a_proj``, then an RMSNorm) and rebuilds each head's key and value from it with an
up-projection (``kv_b_proj``). Only ``c`` needs to be cached.

RoPE does not fit into that picture: a key rebuilt from the cached latent would have to
be rotated again at every step. So each head's query and key have two parts:

- a *content* part of ``qk_nope_head_dim`` features ("no position embedding"), built
  from the latent and never rotated;
- a *RoPE* part of ``qk_rope_head_dim`` features, rotated by the token's position. For
  the keys it is one vector per token *shared by all heads* (``k_rope``, produced by
  ``kv_a_proj`` next to the latent), cached once, already rotated.

The score of head ``h`` is ``(q_nope . k_nope + q_rope . k_rope) / sqrt(nope + rope)``.

The absorbed form (``absorbed=True``) never rebuilds the keys and values:
``q_nope . (W_uk c) = (W_uk^T q_nope) . c``, so the key up-projection ``W_uk`` moves onto
the query, and ``sum_s w_s (W_uv c_s) = W_uv (sum_s w_s c_s)``, so the value
up-projection moves after the weighted sum. Every head then attends to the same keys
``[c, k_rope]`` and the same values ``c``: multi-query attention with one wide head.
Both forms compute the same function; the cache (:class:`mha.KVCache` holding the latent
as "keys" and the shared RoPE key as "values") is the same too.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from ._checks import check_3d, shape_str
from .attention import scaled_dot_product_attention
from .cache import KVCache
from .heads import merge_heads
from .norms import RMSNorm
from .rope import apply_rope, check_rope_options


class MultiHeadLatentAttention(nn.Module):
    """Self-attention whose keys and values come from a cached latent of ``kv_lora_rank``.

    Args:
        d_model: model width ``D``.
        num_heads: number of heads ``H``.
        kv_lora_rank: width ``r`` of the latent ``c`` (DeepSeek-V3: 512).
        qk_nope_head_dim: content part of each head's query/key (DeepSeek-V3: 128).
        qk_rope_head_dim: RoPE part of each head's query and of the shared key (64).
        v_head_dim: width of each head's value (128).
        q_lora_rank: if set, queries are compressed too, through a latent of this width
            with its own RMSNorm (1536); ``None`` gives one ``q_proj``.
        rope_base: RoPE's base ``theta``.
        rope_layout: ``"interleaved"`` (DeepSeek's checkpoints, transformers'
            ``rope_interleave=True``) or ``"half"``.
        norm_eps: epsilon of the two RMSNorms.

    The parameter names are those of transformers' ``DeepseekV3Attention``.
    Shapes: ``x`` ``[B, L, D]`` -> output ``[B, L, D]``, weights ``[B, H, L, S]``.
    """

    def __init__(self, d_model: int, num_heads: int, kv_lora_rank: int, qk_nope_head_dim: int,
                 qk_rope_head_dim: int, v_head_dim: int, q_lora_rank: int | None = None,
                 rope_base: float = 10000.0, rope_layout: str = "interleaved",
                 norm_eps: float = 1e-6):
        super().__init__()
        for name, value in (("d_model", d_model), ("num_heads", num_heads),
                            ("kv_lora_rank", kv_lora_rank), ("qk_nope_head_dim", qk_nope_head_dim),
                            ("v_head_dim", v_head_dim)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {name}={value!r}")
        if q_lora_rank is not None and (not isinstance(q_lora_rank, int) or q_lora_rank < 1):
            raise ValueError(f"q_lora_rank must be None or a positive integer; got {q_lora_rank!r}")
        check_rope_options(qk_rope_head_dim, rope_layout)  # even, and a known layout
        self.d_model, self.num_heads = d_model, num_heads
        self.kv_lora_rank, self.q_lora_rank = kv_lora_rank, q_lora_rank
        self.qk_nope_head_dim, self.qk_rope_head_dim = qk_nope_head_dim, qk_rope_head_dim
        self.v_head_dim = v_head_dim
        self.rope_base, self.rope_layout = rope_base, rope_layout
        qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
        if q_lora_rank is None:
            self.q_proj = nn.Linear(d_model, num_heads * qk_head_dim, bias=False)
        else:
            self.q_a_proj = nn.Linear(d_model, q_lora_rank, bias=False)
            self.q_a_layernorm = RMSNorm(q_lora_rank, eps=norm_eps)
            self.q_b_proj = nn.Linear(q_lora_rank, num_heads * qk_head_dim, bias=False)
        # down: one latent and one shared RoPE key per token (all that is cached)
        self.kv_a_proj_with_mqa = nn.Linear(d_model, kv_lora_rank + qk_rope_head_dim, bias=False)
        self.kv_a_layernorm = RMSNorm(kv_lora_rank, eps=norm_eps)
        # up: every head's content key and value from the latent
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim),
                                   bias=False)
        self.o_proj = nn.Linear(num_heads * v_head_dim, d_model, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                cache: KVCache | None = None, positions: torch.Tensor | None = None,
                absorbed: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``x`` ``[B, L, D]`` to itself and to the cached tokens.

        ``mask`` is boolean (``True`` = may attend), broadcastable to ``[B, H, L, S]``; pass
        :func:`mha.causal_mask` for a decoder. ``cache`` (a :class:`mha.KVCache`) keeps the
        latent ``[B, 1, S, kv_lora_rank]`` and the rotated RoPE key ``[B, 1, S, rope]``.
        ``positions`` ``[L]`` default to ``len(cache), ..., len(cache) + L - 1``.
        ``absorbed=True`` computes the same result without rebuilding keys and values.
        Returns ``(out [B, L, D], weights [B, H, L, S])``.
        """
        check_3d(x, "x")
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x has d_model={x.shape[-1]} (shape {shape_str(x)}) but this "
                             f"MultiHeadLatentAttention was built with d_model={self.d_model}")
        B, L, _ = x.shape
        if positions is None:
            start = 0 if cache is None else len(cache)
            positions = torch.arange(start, start + L, device=x.device)

        q_nope, q_rope = self.queries(x, positions)  # [B, H, L, nope], [B, H, L, rope]
        latent, k_rope = self.latent(x, positions)  # [B, 1, L, r], [B, 1, L, rope]
        if cache is not None:
            latent, k_rope = cache.update(latent, k_rope)  # [B, 1, S, r], [B, 1, S, rope]

        if absorbed:
            out, weights = self._attend_absorbed(q_nope, q_rope, latent, k_rope, mask)
        else:
            out, weights = self._attend_expanded(q_nope, q_rope, latent, k_rope, mask)
        return self.o_proj(merge_heads(out)), weights  # [B, L, D]

    def queries(self, x: torch.Tensor, positions: torch.Tensor):
        """Each head's query, split into its content part and its rotated RoPE part."""
        B, L, _ = x.shape
        if self.q_lora_rank is None:
            q = self.q_proj(x)
        else:
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x)))
        q = q.view(B, L, self.num_heads, -1).transpose(1, 2)  # [B, H, L, nope + rope]
        q_nope, q_rope = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        return q_nope, apply_rope(q_rope, positions, self.rope_base, layout=self.rope_layout)

    def latent(self, x: torch.Tensor, positions: torch.Tensor):
        """What MLA caches per token: the latent ``[B, 1, L, r]`` and the rotated shared
        RoPE key ``[B, 1, L, rope]`` (one "head", so that a :class:`mha.KVCache` holds it)."""
        down = self.kv_a_proj_with_mqa(x)  # [B, L, r + rope]
        latent, k_rope = down.split([self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        latent = self.kv_a_layernorm(latent)[:, None]  # [B, 1, L, r]
        # rotated once, before caching: the RoPE part is never rebuilt from the latent
        k_rope = apply_rope(k_rope[:, None], positions, self.rope_base, layout=self.rope_layout)
        return latent, k_rope

    def _up_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``kv_b_proj`` split per head: ``W_uk`` ``[H, nope, r]`` and ``W_uv`` ``[H, v, r]``."""
        w = self.kv_b_proj.weight.view(self.num_heads, self.qk_nope_head_dim + self.v_head_dim,
                                       self.kv_lora_rank)
        return w.split([self.qk_nope_head_dim, self.v_head_dim], dim=1)

    def _attend_expanded(self, q_nope, q_rope, latent, k_rope, mask):
        """Rebuild every head's key and value from the latent, then attend as usual."""
        B, _, S, _ = latent.shape
        kv = self.kv_b_proj(latent[:, 0]).view(B, S, self.num_heads, -1).transpose(1, 2)
        k_nope, v = kv.split([self.qk_nope_head_dim, self.v_head_dim], dim=-1)  # [B, H, S, .]
        k = torch.cat([k_nope, k_rope.expand(-1, self.num_heads, -1, -1)], dim=-1)
        q = torch.cat([q_nope, q_rope], dim=-1)  # [B, H, L, nope + rope]
        return scaled_dot_product_attention(q, k, v, mask)  # scaled by 1/sqrt(nope + rope)

    def _attend_absorbed(self, q_nope, q_rope, latent, k_rope, mask):
        """Attend in the latent space: one shared key ``[c, k_rope]`` and value ``c``."""
        w_uk, w_uv = self._up_weights()
        q_latent = q_nope @ w_uk  # [B, H, L, nope] @ [H, nope, r] -> [B, H, L, r]
        q = torch.cat([q_latent, q_rope], dim=-1)  # [B, H, L, r + rope]
        k = torch.cat([latent, k_rope], dim=-1)  # [B, 1, S, r + rope], shared by the heads
        # scaled_dot_product_attention divides by sqrt of *its* width, r + rope; the scores
        # must keep the scale of the expanded form, 1/sqrt(nope + rope)
        q = q * math.sqrt(q.shape[-1] / (self.qk_nope_head_dim + self.qk_rope_head_dim))
        out_latent, weights = scaled_dot_product_attention(q, k, latent, mask)  # [B, H, L, r]
        return out_latent @ w_uv.transpose(-2, -1), weights  # [B, H, L, v]

    @classmethod
    def from_transformers(cls, hf_attention) -> MultiHeadLatentAttention:
        """Ours, with the weights of a transformers ``DeepseekV3Attention`` (default RoPE)."""
        c = hf_attention.config
        rope = c.rope_parameters or {}
        if rope.get("rope_type", "default") != "default" or c.attention_bias:
            raise ValueError("only default RoPE without attention biases is supported; got "
                             f"rope_type={rope.get('rope_type')!r}, attention_bias={c.attention_bias}")
        ours = cls(c.hidden_size, c.num_attention_heads, c.kv_lora_rank, c.qk_nope_head_dim,
                   c.qk_rope_head_dim, c.v_head_dim, c.q_lora_rank,
                   rope_base=float(rope.get("rope_theta", 10000.0)),
                   rope_layout="interleaved" if c.rope_interleave else "half",
                   norm_eps=c.rms_norm_eps)
        ours.load_state_dict(hf_attention.state_dict())  # strict: same names and shapes
        return ours.to(next(hf_attention.parameters()).dtype)

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, num_heads={self.num_heads}, "
                f"kv_lora_rank={self.kv_lora_rank}, q_lora_rank={self.q_lora_rank}, "
                f"qk_nope_head_dim={self.qk_nope_head_dim}, "
                f"qk_rope_head_dim={self.qk_rope_head_dim}, v_head_dim={self.v_head_dim}")
