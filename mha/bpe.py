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
:data:`GPT2_SPLIT_PATTERN` is GPT-2's exact pattern, read with the ``regex`` package.

Special tokens such as ``<|endoftext|>`` (between documents) are strings that get one
id of their own. They are cut out of the text *before* the chunks are made, so training
never counts their bytes and no merge ever splits them or joins them to a neighbour.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

# GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
SPLIT_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"""
)
# GPT-2's own pattern (and tiktoken's r50k_base); needs the ``regex`` package for \p{...}
GPT2_SPLIT_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
ENDOFTEXT = "<|endoftext|>"


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


@lru_cache(maxsize=None)
def _compile(pattern: str):
    if r"\p{" in pattern:  # Unicode classes: the ``regex`` package (a transformers dependency)
        import regex
        return regex.compile(pattern)
    return re.compile(pattern)


def split_text(text: str, pattern: str = SPLIT_PATTERN) -> list[str]:
    """Cut ``text`` into GPT-2-style chunks; ``"".join(split_text(t)) == t`` for every ``t``."""
    return _compile(pattern).findall(text)


def split_special(text: str, special_tokens: Iterable[str]) -> list[str]:
    """Cut ``text`` around the special tokens: ``"a<|endoftext|>b" -> ["a", "<|endoftext|>", "b"]``.

    The result alternates ordinary text (even indices, possibly ``""``) and special
    tokens (odd indices). Where two special tokens overlap the longer one wins, so
    ``<|endoftext|><|endoftext|>`` stays one token if it is one.
    """
    specials = tuple(sorted(set(special_tokens), key=len, reverse=True))  # longest first
    if not specials:
        return [text]
    return _special_regex(specials).split(text)


@lru_cache(maxsize=64)
def _special_regex(specials: tuple[str, ...]):
    """One capturing alternation; the longest token is tried first at each position."""
    return re.compile("(" + "|".join(map(re.escape, specials)) + ")")


def train_merges(text: str, vocab_size: int, special_tokens: Iterable[str] = (),
                 pattern: str = SPLIT_PATTERN) -> dict[tuple[int, int], int]:
    """Learn ``vocab_size - 256 - len(special_tokens)`` merges from ``text``:
    ``{(id_a, id_b): new_id}`` in order.

    The special tokens are removed from the text first (they will get ids of their own),
    so their bytes are never counted and no merge can cross or enter them.

    Each round takes the most frequent adjacent pair inside the chunks (ties: the smallest
    pair, e.g. ``(97, 98)`` before ``(256, 97)``), mints the next id for it and merges it
    everywhere. Stops early if no pair is left, so the vocabulary may come out smaller.

    Two savings that do not change the result: a chunk that occurs ``n`` times is stored
    once and counted with weight ``n`` (real text repeats a few thousand distinct words),
    and after a merge only the pair counts of the chunks that changed are updated.
    """
    special_tokens = list(dict.fromkeys(special_tokens))
    if vocab_size < 256 + len(special_tokens):
        raise ValueError(
            f"a byte-level vocabulary holds the 256 byte values first, so vocab_size must be "
            f">= 256 (plus one per special token, {len(special_tokens)} here); got {vocab_size}")
    # ordinary text only: the pieces between special tokens (even indices)
    chunks = Counter(chunk for piece in split_special(text, special_tokens)[0::2]
                     for chunk in split_text(piece, pattern))  # distinct chunk -> how often
    words = [list(chunk.encode("utf-8")) for chunk in chunks]
    freqs = list(chunks.values())
    stats = {}
    for ids, freq in zip(words, freqs):
        get_stats(ids, stats, freq)
    merges = {}
    for idx in range(256, vocab_size - len(special_tokens)):
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


def merges_from_ranks(mergeable_ranks: dict[bytes, int]) -> dict[tuple[int, int], int]:
    """Recover the ordered merges behind a tiktoken-style table ``{token bytes: rank}``.

    tiktoken stores only the tokens (a token's rank is its id). Each token of two or more
    bytes was made by one merge; replaying BPE on its bytes with the earlier ranks only
    stops at exactly two parts, and those are the pair that was merged.
    """
    merges = {}
    for token, rank in sorted(mergeable_ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = [bytes([b]) for b in token]
        while True:  # merge the adjacent parts whose union ranks lowest, below ``rank``
            ranked = [(mergeable_ranks.get(a + b, rank), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            best, i = min(ranked)
            if best >= rank:
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not one merge of two earlier tokens")
        merges[(mergeable_ranks[parts[0]], mergeable_ranks[parts[1]])] = rank
    return merges


class BPETokenizer:
    """A byte-level BPE tokenizer: ``train``, ``encode``, ``decode``, ``save``/``load``.

    The state is the ordered ``merges`` dict and the ``special_tokens`` (``{string: id}``);
    the table ``vocab`` (id -> bytes) is derived from them.
    ``vocab_size = 256 + len(merges) + len(special_tokens)``; special tokens take the ids
    after the merges. ``pattern`` is the chunk regex (:data:`SPLIT_PATTERN` by default).
    ``byte_ids[b]`` is the id of byte ``b``: ``b`` itself, except in tables such as GPT-2's
    whose first 256 ids list the bytes in another order (:meth:`from_ranks`).
    """

    def __init__(self, merges: dict[tuple[int, int], int] | None = None,
                 special_tokens: Iterable[str] | dict[str, int] | None = None,
                 pattern: str = SPLIT_PATTERN, byte_ids: list[int] | None = None):
        self.merges = dict(merges or {})
        self.pattern = pattern
        self.byte_ids = list(range(256)) if byte_ids is None else list(byte_ids)
        if sorted(self.byte_ids) != list(range(256)):
            raise ValueError("byte_ids must give each of the 256 bytes one id in 0..255")
        if not isinstance(special_tokens, dict):  # a list: ids after the merges, in order
            first = 256 + len(self.merges)
            special_tokens = {s: first + k for k, s in enumerate(dict.fromkeys(special_tokens or ()))}
        if any(not s for s in special_tokens):
            raise ValueError("a special token must be a non-empty string")
        self.special_tokens = dict(special_tokens)
        self.vocab = self._build_vocab()

    @classmethod
    def train(cls, text: str, vocab_size: int, special_tokens: Iterable[str] = (),
              pattern: str = SPLIT_PATTERN) -> BPETokenizer:
        """A tokenizer with the merges :func:`train_merges` learns from ``text``; the
        ``special_tokens`` (e.g. ``["<|endoftext|>"]``) take the last ids."""
        special_tokens = list(dict.fromkeys(special_tokens))
        return cls(train_merges(text, vocab_size, special_tokens, pattern), special_tokens, pattern)

    @classmethod
    def from_ranks(cls, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int] | None = None,
                   pattern: str = GPT2_SPLIT_PATTERN) -> BPETokenizer:
        """A tokenizer from a tiktoken-style table ``{token bytes: rank}`` (e.g. GPT-2's
        ``gpt2.tiktoken`` read with ``tiktoken.load.load_tiktoken_bpe``); ids = ranks."""
        byte_ids = [mergeable_ranks[bytes([b])] for b in range(256)]
        merges = merges_from_ranks(mergeable_ranks)
        if sorted(merges.values()) != list(range(256, 256 + len(merges))):
            raise ValueError("the ranks must be the 256 bytes first, then one id per merge")
        return cls(merges, special_tokens or {}, pattern, byte_ids)

    @property
    def vocab_size(self) -> int:
        return 256 + len(self.merges) + len(self.special_tokens)

    def _build_vocab(self) -> dict[int, bytes]:
        vocab = {i: bytes([b]) for b, i in enumerate(self.byte_ids)}
        for (a, b), idx in self.merges.items():  # in merge order: a and b already exist
            vocab[idx] = vocab[a] + vocab[b]
        for s, idx in self.special_tokens.items():
            if idx in vocab:
                raise ValueError(f"special token {s!r} has id {idx}, which a byte or merge uses")
            vocab[idx] = s.encode("utf-8")
        return vocab

    def _encode_chunk(self, chunk: str) -> list[int]:
        ids = [self.byte_ids[b] for b in chunk.encode("utf-8")]
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

    def encode_ordinary(self, text: str) -> list[int]:
        """``str -> list[int]`` ignoring special tokens: ``<|endoftext|>`` is just text."""
        ids = []
        done = {}  # chunk -> ids: real text repeats its words, encode each one once
        for chunk in split_text(text, self.pattern):
            if chunk not in done:
                done[chunk] = self._encode_chunk(chunk)
            ids.extend(done[chunk])
        return ids

    def _allowed(self, allowed_special) -> dict[str, int]:
        if allowed_special == "all":
            return self.special_tokens
        if allowed_special == "none":
            return {}
        unknown = set(allowed_special) - set(self.special_tokens)
        if unknown:
            raise ValueError(f"allowed_special names tokens this tokenizer does not have: "
                             f"{sorted(unknown)}; it has {sorted(self.special_tokens)}")
        return {s: self.special_tokens[s] for s in allowed_special}

    def encode(self, text: str, allowed_special="all") -> list[int]:
        """``str -> list[int]``, every id below ``vocab_size``.

        Each special token in ``allowed_special`` (``"all"``, the default, ``"none"``, or a
        set of strings) becomes its one id; the text between them is encoded as usual.
        (tiktoken's ``encode`` instead refuses special tokens unless they are allowed.)
        """
        specials = self._allowed(allowed_special)
        ids = []
        for k, piece in enumerate(split_special(text, specials)):
            ids.extend([specials[piece]] if k % 2 else self.encode_ordinary(piece))
        return ids

    def encode_iterable(self, texts: Iterable[str], allowed_special="all") -> Iterator[int]:
        """Encode a stream of strings (e.g. the lines of a file larger than memory) lazily.

        Yields exactly the ids of ``encode("".join(texts))``, while holding only a few
        chunks in memory: text is encoded up to the start of the last complete chunk, since
        the last chunk, or a special token, may go on in the next string.

        The settled chunks are encoded as the split cut them *in context*; re-splitting
        them alone could cut differently: before ``"The"`` GPT-2's pattern makes
        ``"\\n\\n"`` two chunks, at the end of a text one.
        """
        specials = self._allowed(allowed_special)
        longest = max(map(len, specials), default=0)
        buffer = ""
        for text in texts:
            buffer += text
            start, chunks = self._settled(buffer, specials, longest)
            yield from self.encode(buffer[:start], specials.keys())  # ends with a special token
            for chunk in chunks:
                yield from self._encode_chunk(chunk)
            buffer = buffer[start + sum(map(len, chunks)):]
        yield from self.encode(buffer, specials.keys())

    def _settled(self, buffer: str, specials: dict[str, int], longest: int) -> tuple[int, list[str]]:
        """What of ``buffer`` more text cannot change: ``buffer[:start]`` (up to the last
        complete special token) and the chunks of ordinary text that follow it."""
        # a special token starting in the last ``longest - 1`` characters may not be
        # complete yet (or may grow into a longer one): the text from there on must wait
        limit = len(buffer) - longest + 1 if specials else len(buffer)
        start = 0  # where the ordinary text after the last settled special token begins
        if specials:
            order = tuple(sorted(specials, key=len, reverse=True))
            for match in _special_regex(order).finditer(buffer):
                if match.start() >= limit:
                    break
                start = match.end()
        chunks = split_text(buffer[start:max(start, limit)], self.pattern)
        # keep the last two chunks: the last may be incomplete ("foo" of "foobar"), and a
        # whitespace run before it is split differently once a word follows
        return start, chunks[:-2]

    def decode(self, ids: list[int]) -> str:
        """``list[int] -> str``; ``decode(encode(t)) == t`` for every string ``t``.

        An arbitrary id sequence may cut a multi-byte character; those bytes become U+FFFD.
        """
        for i in ids:
            if i not in self.vocab:
                raise ValueError(
                    f"token id {i} is outside this tokenizer's vocabulary 0..{self.vocab_size - 1}")
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def save(self, path) -> None:
        """Write the merges in order, the special tokens and the pattern as JSON (the
        vocabulary is rebuilt on load)."""
        data = {"format": "mha-bpe-1", "pattern": self.pattern,
                "merges": [[a, b] for a, b in self.merges],
                "special_tokens": self.special_tokens}
        if self.byte_ids != list(range(256)):
            data["byte_ids"] = self.byte_ids
        Path(path).write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def load(cls, path) -> BPETokenizer:
        """Read a tokenizer written by :meth:`save`."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("format") != "mha-bpe-1" or not isinstance(data.get("pattern"), str):
            raise ValueError(f"{path} is not a tokenizer saved by mha.BPETokenizer.save")
        merges = {(a, b): 256 + i for i, (a, b) in enumerate(data["merges"])}
        return cls(merges, data.get("special_tokens", {}), data["pattern"], data.get("byte_ids"))

    def __repr__(self) -> str:
        specials = f", special_tokens={list(self.special_tokens)}" if self.special_tokens else ""
        return f"BPETokenizer(vocab_size={self.vocab_size}{specials})"
