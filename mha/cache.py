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

    def reorder(self, index: torch.Tensor) -> None:
        """Keep batch rows ``index`` ``[B']`` in that order (beam search: row ``i`` of the
        new batch continues the hypothesis that was row ``index[i]``). Rows may repeat.
        """
        if self._key is None:
            return
        index = torch.as_tensor(index, device=self._key.device)
        if index.dim() != 1 or index.is_floating_point():
            raise ValueError(
                f"index must be a 1-D integer tensor of batch rows [B']; got {index.dtype} "
                f"of shape {list(index.shape)}"
            )
        B = self._key.shape[0]
        if index.numel() and (index.min() < 0 or index.max() >= B):
            raise ValueError(f"index must pick rows in 0..{B - 1}; got {index.tolist()}")
        # index_select copies the chosen rows, so two beams never share one buffer
        self._key = self._key.index_select(0, index)
        self._value = self._value.index_select(0, index)

    def _grow(self, old: torch.Tensor | None, new: torch.Tensor, needed: int) -> torch.Tensor:
        """A buffer with room for at least ``2 * needed`` positions, holding the old ones."""
        capacity = max(2 * needed, 16)
        buffer = new.new_empty(*new.shape[:-2], capacity, new.shape[-1])
        if old is not None:
            buffer.narrow(-2, 0, self._length).copy_(old.narrow(-2, 0, self._length))
        return buffer
