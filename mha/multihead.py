"""Multi-head attention: project, split, attend per head, merge, project."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._checks import check_3d, check_attn_bias, check_mask, check_num_heads, check_num_kv_heads
from ._checks import shape_str
from .attention import scaled_dot_product_attention
from .cache import KVCache, StaticKVCache
from .heads import merge_heads, repeat_kv, split_heads
from .masks import causal_mask
from .rope import apply_rope, check_rope_options


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``.

    Args:
        d_model: model width ``D``; must be divisible by ``num_heads``.
        num_heads: number of query heads ``H``; ``head_dim = D / H``.
        dropout: dropout on the attention weights (training only).
        bias: whether the four projections have a bias.
        num_kv_heads: number of key/value heads (grouped-query attention). Defaults to
            ``num_heads`` (ordinary multi-head attention); ``1`` is multi-query attention.
            Each group of ``H / num_kv_heads`` query heads shares one key/value head.
        rope_base: if set, queries and keys are rotated by their positions
            (:func:`mha.apply_rope`, rotary position embeddings) with this base,
            e.g. ``10000.0``. Self-attention only.
        rope_options: further keyword arguments of :func:`mha.apply_rope`: ``layout``
            (``"half"`` or ``"interleaved"``), ``scaling``, ``factor``, ``trained_len``.

    Shapes: query ``[B, L, D]``, key/value ``[B, S, D]`` (``S`` may differ from ``L``),
    output ``[B, L, D]``, weights ``[B, H, L, S]``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
        rope_options: dict | None = None,
    ):
        super().__init__()
        self.head_dim = check_num_heads(d_model, num_heads)
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self.num_kv_heads = check_num_kv_heads(num_heads, num_kv_heads)
        if rope_base is not None and self.head_dim % 2:
            raise ValueError(
                f"RoPE rotates pairs of features, so head_dim = d_model / num_heads must be "
                f"even; got d_model={d_model}, num_heads={num_heads}, head_dim={self.head_dim}"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.dropout = dropout
        self.rope_base = rope_base
        self.rope_options = dict(rope_options or {})
        if rope_base is not None:
            check_rope_options(self.head_dim, **self.rope_options)
        kv_dim = self.num_kv_heads * self.head_dim  # smaller than d_model with GQA/MQA
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, kv_dim, bias=bias)
        self.v_proj = nn.Linear(d_model, kv_dim, bias=bias)
        self.o_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        need_weights: bool = False,
        cache: KVCache | None = None,
        attn_bias: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
        is_causal: bool = False,
        cache_position: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` ``[B, L, D]`` to ``key``/``value`` ``[B, S, D]``.

        ``key`` defaults to ``query`` (self-attention) and ``value`` to ``key``.
        ``mask`` is boolean, ``True`` = may attend, broadcastable to ``[B, H, L, S]``.
        ``attn_bias`` is a float tensor broadcastable to ``[B, H, L, S]`` added to the
        scaled scores (ALiBi). With ``need_weights=False`` the computation runs in
        PyTorch's fused ``F.scaled_dot_product_attention`` and no weights are returned;
        with ``True`` it runs the explicit path of :func:`mha.scaled_dot_product_attention`
        and returns the per-head weights ``[B, H, L, S]``.
        ``cache`` (see :class:`mha.KVCache`) holds the keys/values of earlier decoding
        steps; ``S`` then counts the cached positions too.
        ``positions`` (RoPE only) are the queries' absolute positions, ``[L]`` shared by the
        batch or ``[B, L]`` per row (a left-padded batch: each row counts from its first real
        token); they default to ``len(cache), ..., len(cache) + L - 1``, right after the
        cached tokens.
        ``is_causal=True`` hides the future: the ``L`` queries are the last ``L`` of ``S``
        positions and each sees the keys up to its own position, as with
        ``mask=causal_mask(L, S)`` (combined with ``mask``, if one is given, by ``&``).
        ``cache_position`` ``[L]`` (a :class:`mha.StaticKVCache` only) names the buffer slots
        the new keys/values are written to; attention then reads the whole buffer,
        ``S = max_len``, so every step has the same shapes (a compiled decoding step), and
        ``mask`` must hide the slots not written yet.
        """
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value)
        if cache_position is not None and not isinstance(cache, StaticKVCache):
            raise ValueError(f"cache_position names slots of a StaticKVCache's buffer; got "
                             f"cache={type(cache).__name__}")
        B, L, _ = query.shape

        # 1. project the queries and split them into heads
        q = split_heads(self.q_proj(query), self.num_heads)  # [B, H, L, d_k]

        # 2. the keys and values
        if cache is not None and cache.static and cache.filled:
            # cross-attention while decoding: the memory was projected on the first step
            k, v = cache.key, cache.value  # [B, H_kv, S, d_k]
        else:
            # fresh keys/values, split with their *own* length S, never the query's L
            k = split_heads(self.k_proj(key), self.num_kv_heads)  # [B, H_kv, S_new, d_k]
            v = split_heads(self.v_proj(value), self.num_kv_heads)  # [B, H_kv, S_new, d_k]
            if self.rope_base is not None:
                # rotate before caching: a cached key keeps the position it was computed at
                q, k = self._rotate(q, k, positions, cache)
            if cache_position is not None:
                k, v = cache.write_at(cache_position, k, v)  # [B, H_kv, max_len, d_k]
            elif cache is not None:
                k, v = cache.update(k, v)  # [B, H_kv, S, d_k]: the cached ones, then the new
        S = k.shape[-2]

        scores_shape = (B, self.num_heads, L, S)
        if mask is not None:
            check_mask(mask, scores_shape, L=L, S=S)
        if attn_bias is not None:
            check_attn_bias(attn_bias, scores_shape, L=L, S=S)

        # Causal attention needs no mask tensor when queries and keys are the same positions
        # (L == S: training, a prompt without a cache): the fused kernel's is_causal=True
        # skips the future keys itself and may take the flash kernel, which a mask tensor
        # rules out (and an [L, L] mask is L * L booleans in memory). Its is_causal puts the
        # triangle's corner top-left, so when L < S (new queries after cached keys, whose
        # corner is bottom-right) and in every other case we build the mask.
        fused_causal = (is_causal and L == S and mask is None and attn_bias is None
                        and not need_weights)
        if is_causal and not fused_causal:
            causal = causal_mask(L, S, device=q.device)  # [L, S]
            mask = causal if mask is None else mask & causal

        # 3. attend, every head at once
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            group = self.num_heads // self.num_kv_heads
            k = repeat_kv(k, group)  # [B, H, S, d_k]: each K/V head serves its group
            v = repeat_kv(v, group)
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p, attn_bias)
        else:
            if attn_bias is not None and mask is not None:
                # the fused kernel takes one mask: a float one is added to the scores
                attn_mask = torch.where(mask, attn_bias, float("-inf"))
            else:
                attn_mask = mask if attn_bias is None else attn_bias
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=fused_causal,
                enable_gqa=self.num_kv_heads != self.num_heads,
            )  # [B, H, L, d_k]
            weights = None

        # 4. merge the heads and 5. mix them with the output projection
        return self.o_proj(merge_heads(out)), weights  # [B, L, D]

    def _rotate(self, q, k, positions, cache):
        """RoPE on queries ``[B, H, L, d_k]`` and keys ``[B, H_kv, L, d_k]``."""
        L = q.shape[-2]
        if k.shape[-2] != L:
            raise ValueError(
                f"rope_base is for self-attention: the {k.shape[-2]} keys need positions "
                f"too, but positions are given for the {L} queries only"
            )
        if positions is None:  # right after the cached tokens
            offset = 0 if cache is None else len(cache)
            positions = torch.arange(offset, offset + L, device=q.device)
        return (apply_rope(q, positions, self.rope_base, **self.rope_options),
                apply_rope(k, positions, self.rope_base, **self.rope_options))

    def _check_inputs(self, query, key, value) -> None:
        for name, x, letters in (("query", query, "[B, L, D]"), ("key", key, "[B, S, D]"),
                                 ("value", value, "[B, S, D]")):
            check_3d(x, name, letters)
            if x.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} has d_model={x.shape[-1]} (shape {shape_str(x)}) but this "
                    f"MultiHeadAttention was built with d_model={self.d_model}"
                )
        if not query.shape[0] == key.shape[0] == value.shape[0]:
            raise ValueError(
                f"query, key and value must have the same batch size B; got "
                f"{query.shape[0]}, {key.shape[0]}, {value.shape[0]}"
            )
        if key.shape[1] != value.shape[1]:
            raise ValueError(
                f"key and value must have the same length S: key {shape_str(key)} has "
                f"S={key.shape[1]} but value {shape_str(value)} has S={value.shape[1]}"
            )

    def extra_repr(self) -> str:
        kv = "" if self.num_kv_heads == self.num_heads else f", num_kv_heads={self.num_kv_heads}"
        rope = "" if self.rope_base is None else f", rope_base={self.rope_base}"
        return (f"d_model={self.d_model}, num_heads={self.num_heads}, "
                f"head_dim={self.head_dim}{kv}{rope}")
