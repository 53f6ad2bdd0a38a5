"""A key/value cache for one attention layer during autoregressive decoding."""
from __future__ import annotations

import torch


class KVCache:
    """Projected keys and values ``[B, H_kv, S, head_dim]`` kept between decoding steps.

    * ``static=False`` (decoder self-attention): each step appends the new token's
      keys/values, so a step costs one projection of one token instead of re-running
      the whole prefix.
    * ``static=True`` (cross-attention): the encoder memory is projected once, on the
      first step, and reused unchanged afterwards.

    A growing cache writes into a buffer with spare room that doubles when it is full,
    so appending a token copies only that token (``torch.cat`` would copy the whole
    cache at every step: quadratic work over a long generation). ``key`` and ``value``
    are views of the filled part, ``[B, H_kv, len(cache), head_dim]``.
    """

    def __init__(self, static: bool = False):
        self.static = static
        self._key: torch.Tensor | None = None    # [B, H_kv, capacity, head_dim]
        self._value: torch.Tensor | None = None
        self._length = 0

    def __len__(self) -> int:
        return self._length

    @property
    def filled(self) -> bool:
        return self._key is not None

    @property
    def key(self) -> torch.Tensor | None:
        return None if self._key is None else self._key.narrow(-2, 0, self._length)

    @property
    def value(self) -> torch.Tensor | None:
        return None if self._value is None else self._value.narrow(-2, 0, self._length)

    def update(self, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store (static) or append (growing) ``key``/``value``; return everything cached."""
        if self.static:
            self._key, self._value, self._length = key, value, key.shape[-2]
            return key, value
        new = key.shape[-2]
        end = self._length + new
        if self._key is None or end > self._key.shape[-2]:
            self._key = self._grow(self._key, key, end)
            self._value = self._grow(self._value, value, end)
        self._key.narrow(-2, self._length, new).copy_(key)
        self._value.narrow(-2, self._length, new).copy_(value)
        self._length = end
        return self.key, self.value

    def _grow(self, old: torch.Tensor | None, new: torch.Tensor, needed: int) -> torch.Tensor:
        """A buffer with room for at least ``2 * needed`` positions, holding the old ones."""
        capacity = max(2 * needed, 16)
        buffer = new.new_empty(*new.shape[:-2], capacity, new.shape[-1])
        if old is not None:
            buffer.narrow(-2, 0, self._length).copy_(old.narrow(-2, 0, self._length))
        return buffer
