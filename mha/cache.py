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
    """

    def __init__(self, static: bool = False):
        self.static = static
        self.key: torch.Tensor | None = None
        self.value: torch.Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.key is None else self.key.shape[-2]

    @property
    def filled(self) -> bool:
        return self.key is not None

    def update(self, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store (static) or append (growing) ``key``/``value``; return everything cached."""
        if self.static or self.key is None:
            self.key, self.value = key, value
        else:
            self.key = torch.cat([self.key, key], dim=-2)
            self.value = torch.cat([self.value, value], dim=-2)
        return self.key, self.value
