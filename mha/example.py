"""The course's running example: one short sentence, its translation, small embeddings.

Every chapter uses the same tokens so that shapes and pictures stay recognisable:
``SENTENCE`` (L = 6) attends to itself, and in cross-attention it attends to
``TRANSLATION`` (S = 7), which shows that L and S need not be equal.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

SENTENCE: tuple[str, ...] = ("the", "cat", "sat", "on", "the", "mat")
TRANSLATION: tuple[str, ...] = ("le", "chat", "était", "assis", "sur", "le", "tapis")


def embed(tokens: Sequence[str], d_model: int = 8, seed: int = 0) -> torch.Tensor:
    """Token strings -> embeddings ``[len(tokens), d_model]``.

    A word always gets the same vector (both "the"s in ``SENTENCE`` are identical), and
    the vectors depend only on the word, ``d_model`` and ``seed``: a stand-in for a
    learned embedding table, reproducible on every machine.
    """
    vocabulary = sorted(set(SENTENCE) | set(TRANSLATION) | set(tokens))
    generator = torch.Generator().manual_seed(seed)
    table = torch.randn(len(vocabulary), d_model, generator=generator)
    return table[[vocabulary.index(t) for t in tokens]]
