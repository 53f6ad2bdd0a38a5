"""Sliding-window attention (Mistral 7B, Gemma 2/3, gpt-oss) and its rolling KV cache.

In a sliding window of ``W`` tokens, the query at position ``p`` sees only the keys at
``p - W + 1 .. p`` (itself and the ``W - 1`` before it), the convention of Mistral and of
transformers' ``sliding_window``. One layer reaches back ``W - 1`` tokens; the next layer
reads outputs that each already summarise ``W`` tokens, so after ``n`` layers
information can travel ``n * (W - 1)`` positions.

StreamingLLM (Xiao et al., 2023) found that trained models park much attention on the
first tokens of a text, and that a window which drops them breaks the model; keeping the
first ``keep_first`` tokens visible to every query (``keep_first=4`` in the paper) repairs
it. Both masks are built here from the absolute positions of queries and keys, so the same
rule serves a full pass (:func:`sliding_window_mask`) and a cache (:class:`RollingKVCache`).
"""
from __future__ import annotations

import torch


def _check_window(window, keep_first) -> None:
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise ValueError(f"window must be a positive integer (the number of keys each query "
                         f"sees, itself included); got window={window!r}")
    if not isinstance(keep_first, int) or isinstance(keep_first, bool) or keep_first < 0:
        raise ValueError(f"keep_first must be a non-negative integer (how many first tokens "
                         f"stay visible); got keep_first={keep_first!r}")


def window_mask_from_positions(query_positions: torch.Tensor, key_positions: torch.Tensor,
                               window: int, keep_first: int = 0) -> torch.Tensor:
    """Boolean ``[L, S]``: may the query at ``query_positions[i]`` see the key at
    ``key_positions[j]``? Yes when the key is not in the future and lies in the last
    ``window`` positions, or is one of the first ``keep_first`` tokens of the text."""
    _check_window(window, keep_first)
    q = query_positions[:, None]  # [L, 1]
    k = key_positions[None, :]  # [1, S]
    return (k <= q) & ((k > q - window) | (k < keep_first))


def sliding_window_mask(L: int, window: int, S: int | None = None, *, keep_first: int = 0,
                        device=None) -> torch.Tensor:
    """Boolean ``[L, S]`` causal sliding-window mask; ``True`` = may attend.

    As in :func:`mha.causal_mask`, the queries are the *last* ``L`` of ``S`` positions: query
    ``i`` sits at position ``S - L + i`` and sees keys ``S - L + i - window + 1 .. S - L + i``
    (and keys ``0 .. keep_first - 1``). With ``window >= S`` this is the causal mask.
    """
    S = L if S is None else S
    if L < 0 or S < L:
        raise ValueError(f"sliding_window_mask needs 0 <= L <= S; got L={L}, S={S}")
    keys = torch.arange(S, device=device)
    return window_mask_from_positions(keys[S - L:], keys, window, keep_first)


class RollingKVCache:
    """A self-attention cache that keeps only what a sliding window can still see.

    After each :meth:`update` it holds the keys/values of the last ``window - 1`` tokens
    (plus the first ``keep_first`` tokens of the text, StreamingLLM's attention sinks):
    the next token's query sees exactly those and itself, so a one-token decoding step
    attends to ``window`` entries (``window + keep_first`` at most) however long the text
    grows. Memory stays constant where :class:`mha.KVCache` grows by one entry per token.

    It plugs into :class:`mha.MultiHeadAttention` like a :class:`mha.KVCache`:
    ``len(cache)`` is the number of tokens seen so far (the next token's position, used
    for RoPE), and :meth:`mask` gives the mask for the next ``L`` queries against the keys
    the next update will return. Keys are cached after RoPE, at their true positions, so
    the result equals a full pass with :func:`sliding_window_mask`.
    """

    static = False  # a self-attention cache (KVCache's flag for a cross-attention memory)

    def __init__(self, window: int, keep_first: int = 0):
        _check_window(window, keep_first)
        self.window, self.keep_first = window, keep_first
        self.key: torch.Tensor | None = None  # [B, H_kv, n, head_dim], n <= window - 1 + keep_first
        self.value: torch.Tensor | None = None
        self.positions = torch.zeros(0, dtype=torch.long)  # [n]: the position of each entry
        self._seen = 0

    def __len__(self) -> int:
        return self._seen  # tokens seen, not entries held: see ``stored``

    @property
    def stored(self) -> int:
        """How many tokens' keys/values are held now."""
        return len(self.positions)

    @property
    def filled(self) -> bool:
        return self.key is not None

    def mask(self, L: int, device=None) -> torch.Tensor:
        """Boolean ``[L, stored + L]`` mask for the next ``L`` tokens (same rule as
        :func:`sliding_window_mask`, on the true positions of the cached keys)."""
        new = torch.arange(self._seen, self._seen + L)
        keys = torch.cat([self.positions, new])
        return window_mask_from_positions(new, keys, self.window, self.keep_first).to(device)

    def update(self, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Take the new ``key``/``value`` ``[B, H_kv, L, head_dim]``; return the cached entries
        followed by the new ones, ``[B, H_kv, stored + L, head_dim]``, then forget every entry
        that no later query can see."""
        L = key.shape[-2]
        if self.key is not None:
            key = torch.cat([self.key, key], dim=-2)
            value = torch.cat([self.value, value], dim=-2)
        new = torch.arange(self._seen, self._seen + L)
        positions = torch.cat([self.positions, new])
        self._seen += L
        # the next query sits at position `seen` and sees keys > seen - window
        keep = (positions > self._seen - self.window) | (positions < self.keep_first)
        index = keep.nonzero()[:, 0].to(key.device)
        self.key, self.value = key.index_select(-2, index), value.index_select(-2, index)
        self.positions = positions[keep]
        return key, value


def receptive_field(num_layers: int, window: int, position: int) -> int:
    """The earliest position whose token can influence the output at ``position`` after
    ``num_layers`` sliding-window layers: each layer reaches ``window - 1`` further back."""
    _check_window(window, 0)
    return max(0, position - num_layers * (window - 1))
