"""The course's running example: one short sentence, its translation, small embeddings.

Every chapter uses the same tokens so that shapes and pictures stay recognisable:
``SENTENCE`` (L = 6) attends to itself, and in cross-attention it attends to
``TRANSLATION`` (S = 7), which shows that L and S need not be equal.
"""
from __future__ import annotations

import zlib
from collections.abc import Sequence

import torch

SENTENCE: tuple[str, ...] = ("the", "cat", "sat", "on", "the", "mat")
TRANSLATION: tuple[str, ...] = ("le", "chat", "était", "assis", "sur", "le", "tapis")
_VOCABULARY: list[str] = sorted(set(SENTENCE) | set(TRANSLATION))


def embed(tokens: Sequence[str], d_model: int = 8, seed: int = 0) -> torch.Tensor:
    """Token strings -> embeddings ``[len(tokens), d_model]``.

    A word always gets the same vector (both "the"s in ``SENTENCE`` are identical), and
    the vector depends only on the word, ``d_model`` and ``seed``, never on the other
    tokens of the call: a stand-in for a learned embedding table, reproducible on every
    machine. The words of ``SENTENCE`` and ``TRANSLATION`` are rows of one random table;
    any other word gets a vector drawn from a generator seeded by the word itself.
    """
    table = torch.randn(len(_VOCABULARY), d_model,
                        generator=torch.Generator().manual_seed(seed))  # [V, d_model]
    rows = []
    for t in tokens:
        if t in _VOCABULARY:
            rows.append(table[_VOCABULARY.index(t)])
        else:
            # crc32, not hash(): Python salts str hashes differently in every process
            word_seed = zlib.crc32(t.encode("utf-8")) + (seed << 32)
            rows.append(torch.randn(d_model, generator=torch.Generator().manual_seed(word_seed)))
    return torch.stack(rows) if rows else torch.empty(0, d_model)
