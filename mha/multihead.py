"""Multi-head attention: project, split, attend per head, merge, project."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._checks import check_3d, check_mask, check_num_heads, shape_str
from .attention import scaled_dot_product_attention
from .cache import KVCache
from .heads import merge_heads, split_heads


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
    ):
        super().__init__()
        self.head_dim = check_num_heads(d_model, num_heads)
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if not isinstance(num_kv_heads, int) or num_kv_heads <= 0 or num_heads % num_kv_heads:
            raise ValueError(
                f"num_kv_heads={num_kv_heads!r} must be a positive divisor of "
                f"num_heads={num_heads}, so that query heads form equal groups"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.dropout = dropout
        kv_dim = num_kv_heads * self.head_dim
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
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` ``[B, L, D]`` to ``key``/``value`` ``[B, S, D]``.

        ``key`` defaults to ``query`` (self-attention) and ``value`` to ``key``.
        ``mask`` is boolean, ``True`` = may attend, broadcastable to ``[B, H, L, S]``.
        With ``need_weights=False`` the computation runs in PyTorch's fused
        ``F.scaled_dot_product_attention`` and no weights are returned; with ``True`` it
        runs the explicit path of :func:`mha.scaled_dot_product_attention` and returns
        the per-head weights ``[B, H, L, S]``.
        ``cache`` (see :class:`mha.KVCache`) holds the keys/values of earlier decoding
        steps; ``S`` then counts the cached positions too.
        """
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value)
        B, L, _ = query.shape

        q = split_heads(self.q_proj(query), self.num_heads)  # [B, H, L, head_dim]
        if cache is not None and cache.static and cache.filled:
            k, v = cache.key, cache.value
        else:
            # keys/values are split with their *own* length S, never the query's L
            k = split_heads(self.k_proj(key), self.num_kv_heads)  # [B, H_kv, S, head_dim]
            v = split_heads(self.v_proj(value), self.num_kv_heads)
            if cache is not None:
                k, v = cache.update(k, v)
        S = k.shape[-2]
        if mask is not None:
            check_mask(mask, torch.Size([B, self.num_heads, L, S]), L=L, S=S)

        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            group = self.num_heads // self.num_kv_heads
            k = k.repeat_interleave(group, dim=1)  # [B, H, S, head_dim]
            v = v.repeat_interleave(group, dim=1)
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p)
        else:
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=dropout_p,
                enable_gqa=self.num_kv_heads != self.num_heads,
            )
            weights = None
        return self.o_proj(merge_heads(out)), weights  # [B, L, D]

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
        return f"d_model={self.d_model}, num_heads={self.num_heads}, head_dim={self.head_dim}{kv}"
