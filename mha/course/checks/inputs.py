"""The inputs of the checks: reproducible random tensors and sizes, and the course's running example."""
from __future__ import annotations

import math

import torch


def randn(*shape: int, seed: int) -> torch.Tensor:
    """Reproducible standard-normal tensor (independent of the global RNG)."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def random_sizes(seed: int, count: int, low: int = 1, high: int = 9) -> list[int]:
    """``count`` reproducible integers in ``[low, high)``."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, (count,), generator=generator).tolist()


def running_example(d_model: int = 8, seed: int = 0):
    """The course's running example: ``x`` [1, 6, d] ("the cat sat on the mat") and
    ``memory`` [1, 7, d] (its French translation), plus three projections [d, d]."""
    from mha.course.example import SENTENCE, TRANSLATION, embed

    x = embed(SENTENCE, d_model=d_model, seed=seed)[None]
    memory = embed(TRANSLATION, d_model=d_model, seed=seed)[None]
    generator = torch.Generator().manual_seed(seed)
    w_q, w_k, w_v = (torch.randn(d_model, d_model, generator=generator) / math.sqrt(d_model)
                     for _ in range(3))
    return x, memory, w_q, w_k, w_v

