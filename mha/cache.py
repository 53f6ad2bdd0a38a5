"""A key/value cache for one attention layer during autoregressive decoding."""
from __future__ import annotations

import torch
import torch.nn as nn


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
        if self._key is None or self.static:  # a memory is stored as it came: no view to cut
            return self._key
        return self._key.narrow(-2, 0, self._length)

    @property
    def value(self) -> torch.Tensor | None:
        if self._value is None or self.static:
            return self._value
        return self._value.narrow(-2, 0, self._length)

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


class StaticKVCache(nn.Module):
    """A self-attention cache with one fixed buffer of ``max_len`` positions, written in place.

    :class:`KVCache` is the teaching version: it grows as tokens arrive. When the final
    length is known in advance (prompt length + new tokens), this cache allocates
    ``[B, H_kv, max_len, head_dim]`` once, on its first update (so it takes the batch size,
    device and dtype of the keys it is given), and each step writes the new keys/values
    into the next free slots by slice assignment: no allocation, no copy of old tokens,
    ever. ``key``/``value`` are views of the filled part, ``[B, H_kv, len(cache), head_dim]``,
    so attention never reads the empty slots.

    (The name follows transformers' ``StaticCache``: the *buffer* is static. This is not
    ``KVCache(static=True)``, the cross-attention cache whose *content* never changes.)

    It is an ``nn.Module`` only so that its buffers are module buffers: ``torch.compile``
    treats those as fixed addresses, which a captured decoding step (CUDA graphs) needs,
    since the step writes into them (:meth:`write_at`). It has no ``forward``.
    """

    static = False  # KVCache's flag for a cross-attention memory; this cache is appended to

    def __init__(self, max_len: int):
        if not isinstance(max_len, int) or max_len < 1:
            raise ValueError(f"max_len must be a positive integer; got max_len={max_len!r}")
        super().__init__()
        self.max_len = max_len
        # [B, H_kv, max_len, head_dim] once allocated; not saved with a state_dict
        self.register_buffer("key_buffer", None, persistent=False)
        self.register_buffer("value_buffer", None, persistent=False)
        self._length = 0

    def __len__(self) -> int:
        return self._length

    @property
    def filled(self) -> bool:
        return self.key_buffer is not None

    @property
    def key(self) -> torch.Tensor | None:
        return None if self.key_buffer is None else self.key_buffer[:, :, :self._length]

    @property
    def value(self) -> torch.Tensor | None:
        return None if self.value_buffer is None else self.value_buffer[:, :, :self._length]

    def update(self, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``key``/``value`` ``[B, H_kv, new, head_dim]`` after the cached positions;
        return everything cached, ``[B, H_kv, len(cache), head_dim]``."""
        if self.key_buffer is None:
            B, H_kv, _, head_dim = key.shape
            # allocated once, like the keys: same device and dtype
            self.key_buffer = key.new_zeros(B, H_kv, self.max_len, head_dim)
            self.value_buffer = value.new_zeros(B, H_kv, self.max_len, value.shape[-1])
        start, end = self._length, self._length + key.shape[-2]
        if end > self.max_len:
            raise ValueError(
                f"this StaticKVCache holds max_len={self.max_len} positions; writing "
                f"{key.shape[-2]} more after {start} would need {end}")
        self.key_buffer[:, :, start:end] = key  # in place: the buffer never moves
        self.value_buffer[:, :, start:end] = value
        self._length = end
        return self.key, self.value

    def write_at(self, position: torch.Tensor, key: torch.Tensor,
                 value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``key``/``value`` ``[B, H_kv, T, head_dim]`` into the slots ``position``
        ``[T]`` (a tensor, so no Python number changes between steps); return the whole
        buffers ``[B, H_kv, max_len, head_dim]``.

        This is :meth:`update` for a compiled decoding step: its shapes are the same at every
        position, so the compiler can capture the step once and replay it. The slots not
        written yet hold zeros (or an earlier generation's keys), so the caller's mask must
        hide every slot after the newest. ``len(cache)`` is not advanced: it is a Python
        number, which a captured step cannot change; the caller keeps the count.
        """
        if self.key_buffer is None:
            raise ValueError("write_at writes into the buffer that the first update (the "
                             "prompt's prefill) allocates; call update first")
        self.key_buffer.index_copy_(2, position, key)  # in place, at the given slots
        self.value_buffer.index_copy_(2, position, value)
        return self.key_buffer, self.value_buffer

    def reorder(self, index: torch.Tensor) -> None:
        """Keep batch rows ``index`` ``[B]`` in that order, in place (beam search); the batch
        size cannot change, since the buffer does not."""
        if self.key_buffer is None:
            return
        index = torch.as_tensor(index, device=self.key_buffer.device)
        B = self.key_buffer.shape[0]
        if index.shape != (B,) or index.is_floating_point():
            raise ValueError(f"index must be a 1-D integer tensor of {B} batch rows (a "
                             f"StaticKVCache keeps its batch size); got {index.dtype} of "
                             f"shape {list(index.shape)}")
        if index.min() < 0 or index.max() >= B:
            raise ValueError(f"index must pick rows in 0..{B - 1}; got {index.tolist()}")
        # index_select makes a copy first, so a row is never overwritten before it is read
        self.key_buffer.copy_(self.key_buffer.index_select(0, index))
        self.value_buffer.copy_(self.value_buffer.index_select(0, index))
