"""A small synthetic translation task: English number words -> digits.

``"three hundred and seven"`` -> ``"307"``, for every number from 0 to :data:`MAX_NUMBER`.
It is small enough to train on a CPU in about a minute, yet it needs everything an
encoder-decoder Transformer has: sources and targets of different lengths (padding
masks), a left-to-right output (causal mask), and outputs that must look back at the
right source words (cross-attention). Some digits have no word of their own
(the ``0`` of ``"307"``), so the model cannot just copy word by word.

Tokens: the source is split on spaces (one token per word), the target is one token
per digit. Both vocabularies start with the same special tokens ``<pad>`` (id 0),
``<bos>`` (1) and ``<eos>`` (2).
"""
from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from ..masks import padding_mask

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
SPECIALS: tuple[str, ...] = (PAD, BOS, EOS)
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
MAX_NUMBER = 9999

ONES: tuple[str, ...] = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen",
)
TENS: tuple[str, ...] = (
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
)


def number_to_words(n: int) -> str:
    """British English words for ``0 <= n <= MAX_NUMBER``, words separated by spaces.

    >>> number_to_words(307)
    'three hundred and seven'
    >>> number_to_words(2005)
    'two thousand and five'
    >>> number_to_words(4321)
    'four thousand three hundred and twenty one'
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"number_to_words needs an int in 0..{MAX_NUMBER}, got {n!r}")
    if n < 20:
        return ONES[n]
    thousands, hundreds, rest = n // 1000, n // 100 % 10, n % 100
    words: list[str] = []
    if thousands:
        words += [ONES[thousands], "thousand"]
    if hundreds:
        words += [ONES[hundreds], "hundred"]
    if rest:
        if words:
            words.append("and")  # "three hundred and seven", "two thousand and five"
        if rest < 20:
            words.append(ONES[rest])
        else:
            words.append(TENS[rest // 10])
            if rest % 10:
                words.append(ONES[rest % 10])
    return " ".join(words)


def digit_alignment(n: int) -> list[int | None]:
    """For each digit of ``str(n)``, the index of the source word that spells it.

    ``None`` marks a digit no word spells (the ``0`` of ``"307"``). A teen word spells
    two digits (``"thirteen"`` -> ``1`` and ``3``):

    >>> digit_alignment(307)      # three hundred and seven
    [0, None, 3]
    >>> digit_alignment(4013)     # four thousand and thirteen
    [0, None, 3, 3]
    """
    words = number_to_words(n).split()
    if n == 0:
        return [0]
    places: list[int | None] = []  # thousands, hundreds, tens, ones
    places.append(0 if n >= 1000 else None)
    places.append(words.index("hundred") - 1 if "hundred" in words else None)
    rest = n % 100
    start = words.index("and") + 1 if "and" in words else 0  # where the last two digits are
    if rest == 0:
        places += [None, None]
    elif rest < 10:
        places += [None, start]
    elif rest < 20:
        places += [start, start]
    else:
        places += [start, start + 1 if rest % 10 else None]
    return places[4 - len(str(n)):]


class Vocab:
    """Maps tokens to ids and back; ids ``0, 1, 2`` are ``<pad>``, ``<bos>``, ``<eos>``."""

    def __init__(self, tokens: Iterable[str]):
        self.tokens: tuple[str, ...] = SPECIALS + tuple(t for t in tokens if t not in SPECIALS)
        if len(set(self.tokens)) != len(self.tokens):
            raise ValueError("vocabulary tokens must be unique")
        self.ids = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {' '.join(self.tokens)})"

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Tokens -> ids; an unknown token raises ``ValueError`` naming it."""
        unknown = [t for t in tokens if t not in self.ids]
        if unknown:
            raise ValueError(f"tokens {unknown} are not in the vocabulary {self.tokens}")
        return [self.ids[t] for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids -> tokens, dropping ``<pad>``/``<bos>`` and stopping at the first ``<eos>``."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i not in (PAD_ID, BOS_ID):
                out.append(self.tokens[i])
        return out


SRC_VOCAB = Vocab(ONES + TENS[2:] + ("hundred", "thousand", "and"))
TGT_VOCAB = Vocab("0123456789")


def encode_source(text: str) -> list[int]:
    """``"three hundred and seven"`` -> source ids, one per word (no specials)."""
    return SRC_VOCAB.encode(text.split())


def encode_target(digits: str) -> list[int]:
    """``"307"`` -> target ids ``[3, 0, 7, <eos>]`` (the labels; no ``<bos>``)."""
    return TGT_VOCAB.encode(list(digits)) + [EOS_ID]


def decode_source(ids: Iterable[int]) -> str:
    """Source ids -> words joined with spaces (padding dropped)."""
    return " ".join(SRC_VOCAB.decode(ids))


def decode_target(ids: Iterable[int]) -> str:
    """Target ids -> the digit string, stopping at the first ``<eos>``."""
    return "".join(TGT_VOCAB.decode(ids))


def split_numbers(n_test: int = 1000, seed: int = 0,
                  max_number: int = MAX_NUMBER) -> tuple[list[int], list[int]]:
    """Shuffle ``0..max_number`` with ``seed`` and hold out ``n_test`` of them.

    Returns ``(train, test)``, two disjoint sorted lists that together cover every number:
    a test number never appears in training, so test accuracy measures generalisation.
    """
    if not 0 < n_test <= max_number:
        raise ValueError(f"n_test must lie in 1..{max_number}, got {n_test}")
    numbers = list(range(max_number + 1))
    random.Random(seed).shuffle(numbers)
    return sorted(numbers[n_test:]), sorted(numbers[:n_test])


def pad_sequences(sequences: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> torch.Tensor:
    """List of id lists -> ``[B, T_max]`` long tensor, right-padded with ``pad_id``."""
    longest = max((len(s) for s in sequences), default=0)
    out = torch.full((len(sequences), longest), pad_id, dtype=torch.long)
    for row, s in enumerate(sequences):
        out[row, :len(s)] = torch.as_tensor(s, dtype=torch.long)
    return out


@dataclass
class Batch:
    """A padded batch of examples.

    ``src`` ``[B, S]`` word ids, ``src_lengths`` ``[B]``, ``labels`` ``[B, T]`` digit ids
    followed by ``<eos>`` and padding; ``numbers`` are the integers themselves.
    """

    numbers: list[int]
    src: torch.Tensor
    src_lengths: torch.Tensor
    labels: torch.Tensor

    @property
    def src_mask(self) -> torch.Tensor:
        """Boolean ``[B, 1, 1, S]`` padding mask: ``True`` on real words."""
        return padding_mask(self.src_lengths, self.src.shape[1])

    @property
    def sources(self) -> list[str]:
        return [number_to_words(n) for n in self.numbers]

    @property
    def targets(self) -> list[str]:
        return [str(n) for n in self.numbers]

    def __len__(self) -> int:
        return len(self.numbers)


def make_batch(numbers: Sequence[int]) -> Batch:
    """Numbers -> a padded :class:`Batch` (sources as words, labels as digits + ``<eos>``)."""
    numbers = [int(n) for n in numbers]
    src = [encode_source(number_to_words(n)) for n in numbers]
    labels = [encode_target(str(n)) for n in numbers]
    return Batch(numbers, pad_sequences(src), torch.tensor([len(s) for s in src]),
                 pad_sequences(labels))


def random_batches(numbers: Sequence[int], batch_size: int, steps: int, seed: int = 0):
    """Yield ``steps`` batches of ``batch_size`` numbers drawn from ``numbers``.

    Sampling reshuffles ``numbers`` every epoch with its own seeded generator, so the
    sequence of batches depends only on ``seed`` (not on the global random state).
    """
    if batch_size <= 0 or steps < 0:
        raise ValueError(f"batch_size must be positive and steps >= 0; got {batch_size}, {steps}")
    pool = list(numbers)
    rng = random.Random(seed)
    order: list[int] = []
    for _ in range(steps):
        if len(order) < batch_size:
            rng.shuffle(pool)
            order += pool
        chosen, order = order[:batch_size], order[batch_size:]
        yield make_batch(chosen)
