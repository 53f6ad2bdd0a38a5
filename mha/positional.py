"""Sinusoidal positional encodings (Vaswani et al., 2017)."""
from __future__ import annotations

import torch


def sinusoidal_positions(L: int, d: int) -> torch.Tensor:
    """``[L, d]`` table with ``PE[p, 2i] = sin(p / 10000^(2i/d))`` and
    ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``.

    Each pair of columns is a rotation at its own frequency, from one turn every
    ``2*pi`` positions (``i = 0``) down to one every ``2*pi*10000`` positions.
    """
    if L < 0 or d <= 0 or d % 2:
        raise ValueError(f"sinusoidal_positions needs L >= 0 and an even d > 0; got L={L}, d={d}")
    position = torch.arange(L, dtype=torch.float32)[:, None]  # [L, 1]
    two_i = torch.arange(0, d, 2, dtype=torch.float32)  # [d/2]
    angle = position / 10000 ** (two_i / d)  # [L, d/2]
    pe = torch.empty(L, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe
