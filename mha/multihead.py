"""Multi-head attention: project, split, attend per head, merge, project."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules import module as _module_hooks  # the global module hooks

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
        self._pack_qkv()

    # ------------------------------------------------------------------ packed q/k/v
    # Speed only, no change in results: the q, k and v weights (and biases) live side by
    # side in one buffer, ``q_proj.weight`` etc. being views into it. Self-attention can
    # then project all three with ONE matrix multiply ``[B, L, D] @ [D, D + 2*kv_dim]``,
    # as ``nn.MultiheadAttention`` does with its ``in_proj_weight``. The parameters stay
    # three ordinary ``nn.Linear`` s (same names, state_dict and gradients).

    def _pack_qkv(self) -> None:
        """Move the q/k/v weights (and biases) into one contiguous buffer, rows q|k|v."""
        projs = (self.q_proj, self.k_proj, self.v_proj)
        self._qkv_rows = self._qkv_layout = None
        weights = [p.weight for p in projs]
        if len({(w.dtype, w.device) for w in weights}) != 1 or weights[0].is_meta:
            return
        with torch.no_grad():
            weight = _pack(weights)
            has_bias = all(p.bias is not None for p in projs)
            bias = _pack([p.bias for p in projs]) if has_bias else None
        # rows for q|k|v (self-attention) and for k|v alone (cross-attention)
        self._qkv_rows = ((weight, bias),
                          (weight[self.d_model:], None if bias is None else bias[self.d_model:]))
        self._qkv_layout = self._layout()

    def _layout(self) -> tuple:
        """Where the q/k/v weights and biases live now (their addresses in memory).

        A parameter that was reassigned, converted or loaded with ``assign=True`` has a
        new address; one changed in place (``copy_``, ``.data.copy_``, an optimizer step)
        keeps its address and, being a view of the packed buffer, changes it too.
        """
        layout = []
        for name in ("q_proj", "k_proj", "v_proj"):
            params = self._modules[name]._parameters  # (plain dict look-ups: this runs per call)
            layout += [None if params.get(t) is None else params[t].data_ptr()
                       for t in ("weight", "bias")]
        return tuple(layout)

    def _apply(self, fn, *args, **kwargs):
        # .to(), .double(), .cuda() ... give each parameter new storage: pack again.
        result = super()._apply(fn, *args, **kwargs)
        self._pack_qkv()
        return result

    def _packed(self, first: int) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """The packed (weight, bias) of q|k|v (``first=0``) or of k|v (``first=1``).

        ``None`` when the plain projections must run instead: autograd is recording, a
        hook or a replaced module watches a projection, or the parameters no longer sit
        in the packed buffer (reassigned, or loaded with ``assign=True``).
        """
        if self._qkv_layout is None:
            return None
        if _module_hooks._global_forward_hooks or _module_hooks._global_forward_pre_hooks:
            return None
        grad = torch.is_grad_enabled()
        for name in ("q_proj", "k_proj", "v_proj")[first:]:
            proj = self._modules[name]
            if type(proj) is not nn.Linear or proj._forward_hooks or proj._forward_pre_hooks:
                return None
            if grad and any(p is not None and p.requires_grad for p in proj._parameters.values()):
                return None
        if self._layout() != self._qkv_layout:
            return None
        return self._qkv_rows[first]

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

        reuse_kv = cache is not None and cache.static and cache.filled
        kv_dim = self.num_kv_heads * self.head_dim
        packed = None if reuse_kv or value is not key else self._packed(0 if key is query else 1)
        if packed is not None and key is query:
            # self-attention: q, k and v in one matrix multiply
            q, k, v = F.linear(query, *packed).split([self.d_model, kv_dim, kv_dim], dim=-1)
        else:
            q = self.q_proj(query)
            if reuse_kv:
                k = v = None
            elif packed is not None:
                k, v = F.linear(key, *packed).split([kv_dim, kv_dim], dim=-1)
            else:
                k, v = self.k_proj(key), self.v_proj(value)
        q = split_heads(q, self.num_heads)  # [B, H, L, head_dim]
        if reuse_kv:
            k, v = cache.key, cache.value
        else:
            # keys/values are split with their *own* length S, never the query's L
            k = split_heads(k, self.num_kv_heads)  # [B, H_kv, S, head_dim]
            v = split_heads(v, self.num_kv_heads)
            if cache is not None:
                k, v = cache.update(k, v)
        S = k.shape[-2]
        if mask is not None and not _fits(mask, (B, self.num_heads, L, S)):
            check_mask(mask, torch.Size([B, self.num_heads, L, S]), L=L, S=S)  # raises

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


def _pack(params: list[torch.Tensor]) -> torch.Tensor:
    """Copy ``params`` into one new buffer and make each parameter a view of its rows."""
    packed = torch.cat([p.detach() for p in params])
    offset = 0
    for p in params:
        p.data = packed[offset:offset + p.shape[0]]
        offset += p.shape[0]
    return packed


def _fits(mask: torch.Tensor, shape: tuple[int, ...]) -> bool:
    """A quick ``check_mask``: boolean and broadcastable to exactly ``shape``.

    (``torch.broadcast_shapes`` costs tens of microseconds, which adds up over the
    hundreds of attention calls of a decoding loop; a mask that fails this test goes
    through :func:`check_mask`, which explains what is wrong.)
    """
    return (mask.dtype == torch.bool and mask.dim() <= len(shape)
            and all(m == 1 or m == n for m, n in zip(reversed(mask.shape), reversed(shape))))
