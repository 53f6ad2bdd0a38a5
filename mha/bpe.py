"""Byte-level byte-pair encoding (BPE), the tokenizer family of GPT-2 and Llama 3.

Text becomes UTF-8 bytes, so ids 0-255 are the 256 byte values and *any* string can be
encoded. Training then repeats one step: find the most frequent pair of adjacent ids and
give it a new id (256, 257, ...). Encoding replays those merges, earliest first; decoding
looks each id up as a byte string and joins them.

Layout after Karpathy's minbpe: two pure functions (:func:`get_stats`, :func:`merge`),
the training loop (:func:`train_merges`), then :class:`BPETokenizer`.

Before counting pairs, text is cut into chunks (words, numbers, punctuation runs,
whitespace) and merges never cross a chunk boundary, as in GPT-2; so " the" can become one
token but "e." never does. GPT-2's pattern uses ``\\p{L}`` (any letter) and ``\\p{N}``
(any number), which Python's built-in ``re`` lacks; :data:`SPLIT_PATTERN` approximates
them with ``[^\\W\\d_]`` (word characters that are not digits or ``_``) and ``\\d`` (decimal
digits). The chunks of ordinary text are the same; the classes differ on rare characters
(``²`` counts as a letter here, a number there), which only changes which merges are
allowed, never the round trip: every character falls in one of the classes.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

# GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
SPLIT_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"""
)


def get_stats(ids: list[int], counts: dict | None = None, weight: int = 1) -> dict:
    """Count adjacent pairs: ``[1, 2, 3, 1, 2] -> {(1, 2): 2, (2, 3): 1, (3, 1): 1}``.

    With ``counts`` the pairs are added to that dict (``weight`` times each), so the
    statistics of many chunks can be summed.
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids: list[int], pair: tuple[int, int], idx: int) -> list[int]:
    """Replace every occurrence of ``pair`` by ``idx``, left to right, without overlaps.

    ``merge([1, 2, 3, 1, 2], (1, 2), 4) -> [4, 3, 4]``;
    ``merge([5, 5, 5], (5, 5), 6) -> [6, 5]``.
    """
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def split_text(text: str) -> list[str]:
    """Cut ``text`` into GPT-2-style chunks; ``"".join(split_text(t)) == t`` for every ``t``."""
    return re.findall(SPLIT_PATTERN, text)


def train_merges(text: str, vocab_size: int) -> dict[tuple[int, int], int]:
    """Learn ``vocab_size - 256`` merges from ``text``: ``{(id_a, id_b): new_id}`` in order.

    Each round takes the most frequent adjacent pair inside the chunks (ties: the smallest
    pair, e.g. ``(97, 98)`` before ``(256, 97)``), mints the next id for it and merges it
    everywhere. Stops early if no pair is left, so the vocabulary may come out smaller.

    Two savings that do not change the result: a chunk that occurs ``n`` times is stored
    once and counted with weight ``n`` (real text repeats a few thousand distinct words),
    and after a merge only the pair counts of the chunks that changed are updated.
    """
    if vocab_size < 256:
        raise ValueError(
            f"a byte-level vocabulary holds the 256 byte values first, so vocab_size must be "
            f">= 256; got {vocab_size}")
    chunks = Counter(split_text(text))  # distinct chunk -> how often it occurs
    words = [list(chunk.encode("utf-8")) for chunk in chunks]
    freqs = list(chunks.values())
    stats = {}
    for ids, freq in zip(words, freqs):
        get_stats(ids, stats, freq)
    merges = {}
    for idx in range(256, vocab_size):
        if not stats:
            break
        pair = max(stats, key=lambda p: (stats[p], -p[0], -p[1]))
        for w, (ids, freq) in enumerate(zip(words, freqs)):
            if pair[0] not in ids:  # quick skip: most chunks cannot contain the pair
                continue
            new = merge(ids, pair, idx)
            if len(new) < len(ids):
                get_stats(ids, stats, -freq)  # forget the chunk's old pairs ...
                get_stats(new, stats, freq)  # ... and count its new ones
                words[w] = new
        stats = {p: n for p, n in stats.items() if n > 0}
        merges[pair] = idx
    return merges


class BPETokenizer:
    """A byte-level BPE tokenizer: ``train``, ``encode``, ``decode``, ``save``/``load``.

    The only state is the ordered ``merges`` dict; the table ``vocab`` (id -> bytes) is
    derived from it. ``vocab_size = 256 + len(merges)``.
    """

    def __init__(self, merges: dict[tuple[int, int], int] | None = None):
        self.merges = dict(merges or {})
        self.vocab = self._build_vocab()

    @classmethod
    def train(cls, text: str, vocab_size: int) -> BPETokenizer:
        """A tokenizer with the merges :func:`train_merges` learns from ``text``."""
        return cls(train_merges(text, vocab_size))

    @property
    def vocab_size(self) -> int:
        return 256 + len(self.merges)

    def _build_vocab(self) -> dict[int, bytes]:
        vocab = {i: bytes([i]) for i in range(256)}
        for (a, b), idx in self.merges.items():  # in merge order: a and b already exist
            vocab[idx] = vocab[a] + vocab[b]
        return vocab

    def _encode_chunk(self, chunk: str) -> list[int]:
        ids = list(chunk.encode("utf-8"))
        while len(ids) >= 2:
            stats = get_stats(ids)
            # the pair that was merged earliest in training; pairs never merged rank inf
            pair = min(stats, key=lambda p: self.merges.get(p, float("inf")))
            # subtle: if no pair here was ever merged, every rank is inf and min() returns
            # an arbitrary pair that is not in merges: nothing left to do
            if pair not in self.merges:
                break
            ids = merge(ids, pair, self.merges[pair])
        return ids

    def encode(self, text: str) -> list[int]:
        """``str -> list[int]``, every id below ``vocab_size``."""
        ids = []
        done = {}  # chunk -> ids: real text repeats its words, encode each one once
        for chunk in split_text(text):
            if chunk not in done:
                done[chunk] = self._encode_chunk(chunk)
            ids.extend(done[chunk])
        return ids

    def decode(self, ids: list[int]) -> str:
        """``list[int] -> str``; ``decode(encode(t)) == t`` for every string ``t``.

        An arbitrary id sequence may cut a multi-byte character; those bytes become U+FFFD.
        """
        for i in ids:
            if not 0 <= i < self.vocab_size:
                raise ValueError(
                    f"token id {i} is outside this tokenizer's vocabulary 0..{self.vocab_size - 1}")
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def save(self, path) -> None:
        """Write the merges, in order, as JSON (the vocabulary is rebuilt on load)."""
        data = {"format": "mha-bpe-1", "pattern": SPLIT_PATTERN,
                "merges": [[a, b] for a, b in self.merges]}
        Path(path).write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def load(cls, path) -> BPETokenizer:
        """Read a tokenizer written by :meth:`save`."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("format") != "mha-bpe-1" or data.get("pattern") != SPLIT_PATTERN:
            raise ValueError(f"{path} is not a tokenizer saved by mha.BPETokenizer.save")
        return cls({(a, b): 256 + i for i, (a, b) in enumerate(data["merges"])})

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size})"
