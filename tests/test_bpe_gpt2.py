"""Our BPE with GPT-2's vocabulary encodes exactly as tiktoken's GPT-2 encoding.

GPT-2's table ships in tests/data/gpt2.tiktoken (byte-identical to tiktoken's r50k_base,
checked by its sha256), so nothing is downloaded. tiktoken is the independent reference:
it implements BPE as "merge the adjacent parts whose concatenation ranks lowest" in Rust,
while ours replays the recovered merges in Python.
"""
import random
import sysconfig
from itertools import islice
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings, strategies as st
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext.openai_public import r50k_pat_str

from mha import BPETokenizer
from mha.bpe import GPT2_SPLIT_PATTERN, split_text

GPT2_FILE = Path(__file__).parent / "data" / "gpt2.tiktoken"
GPT2_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
EOT = "<|endoftext|>"

# Latin with accents and contractions, CJK, Korean, Arabic, emoji (with a ZWJ sequence and
# a flag), digit runs, whitespace runs of spaces, tabs and newlines, code, special tokens
SEVERAL_SCRIPTS = (
    "Hello world! It's 2026, isn't it? They'll say we've   won.\t\t\n\n  \n"
    "Ünïcödé naïve café — déjà vu. 注意力机制很重要。大模型。 한국어 텍스트입니다. "
    "مرحبا بالعالم 🙂👩‍💻🇫🇷🙂🙂 1234567890 3.14159 1,000,000 x²"
    f"{EOT}def forward(self, x):\n    return x ** 2   \n\n\n{EOT}{EOT}    trailing   "
)


@pytest.fixture(scope="module")
def ranks():
    return load_tiktoken_bpe(str(GPT2_FILE), expected_hash=GPT2_SHA256)


@pytest.fixture(scope="module")
def tiktoken_gpt2(ranks):
    return tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={EOT: 50256})


@pytest.fixture(scope="module")
def ours(ranks):
    return BPETokenizer.from_ranks(ranks, {EOT: 50256})


def test_gpt2_vocabulary_has_50257_ids_with_endoftext_last(ours):
    assert ours.vocab_size == 50257
    assert ours.encode(EOT) == [50256]


def test_encode_equals_tiktoken_gpt2_on_several_scripts_with_special_tokens(ours, tiktoken_gpt2):
    expected = tiktoken_gpt2.encode(SEVERAL_SCRIPTS, allowed_special="all")
    assert expected.count(50256) == 3
    assert ours.encode(SEVERAL_SCRIPTS) == expected


def test_decode_equals_tiktoken_gpt2_and_round_trips(ours, tiktoken_gpt2):
    ids = tiktoken_gpt2.encode(SEVERAL_SCRIPTS, allowed_special="all")
    assert ours.decode(ids) == tiktoken_gpt2.decode(ids) == SEVERAL_SCRIPTS


def test_decode_of_a_cut_character_gives_a_replacement_character_as_tiktoken(ours, tiktoken_gpt2):
    # the first two of the four UTF-8 bytes of "🙂", then "!"
    ids = [ours.byte_ids[b] for b in "🙂".encode("utf-8")[:2]] + ours.encode("!")
    assert tiktoken_gpt2.decode(ids) == "\ufffd!"
    assert ours.decode(ids) == "\ufffd!"


def test_special_tokens_as_plain_text_equal_tiktokens_encode_ordinary(ours, tiktoken_gpt2):
    assert (ours.encode(SEVERAL_SCRIPTS, allowed_special="none")
            == tiktoken_gpt2.encode_ordinary(SEVERAL_SCRIPTS))


def test_streaming_encode_of_lines_equals_tiktoken_on_the_whole_text(ours, tiktoken_gpt2):
    lines = iter(SEVERAL_SCRIPTS.splitlines(keepends=True))
    assert (list(ours.encode_iterable(lines))
            == tiktoken_gpt2.encode(SEVERAL_SCRIPTS, allowed_special="all"))


def test_streaming_encode_keeps_two_newlines_that_the_split_cuts_apart_in_context(ours, tiktoken_gpt2):
    # before "The", GPT-2's pattern cuts "\n\n" into "\n", "\n" (ids 198, 198); at the
    # end of a text it keeps "\n\n" whole (id 628)
    text = "x\n\nThe end"
    plain = BPETokenizer(ours.merges, {}, GPT2_SPLIT_PATTERN, ours.byte_ids)  # no special tokens
    assert tiktoken_gpt2.encode(text) == [87, 198, 198, 464, 886]
    assert list(plain.encode_iterable([text])) == [87, 198, 198, 464, 886]


def random_pieces(text, rng, longest=30):
    """``text`` cut at random places into pieces of 0 to ``longest`` characters."""
    pieces = []
    while text:
        n = rng.randint(0, longest)
        pieces.append(text[:n])
        text = text[n:]
    return pieces


@pytest.mark.parametrize("seed", range(4))
def test_streaming_encode_of_python_source_cut_at_random_equals_tiktoken(ours, tiktoken_gpt2, seed):
    # real code: blank lines ("\n\n") and indentation runs everywhere
    text = (Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py").read_text(encoding="utf-8")[:8000]
    pieces = random_pieces(text, random.Random(seed))
    expected = tiktoken_gpt2.encode(text)
    assert ours.encode(text) == expected
    assert list(ours.encode_iterable(pieces)) == expected


def test_our_gpt2_pattern_cuts_text_as_tiktokens_pattern():
    # tiktoken's pattern is an optimised rewrite (possessive quantifiers) of GPT-2's
    import regex
    assert split_text(SEVERAL_SCRIPTS, GPT2_SPLIT_PATTERN) == regex.findall(r50k_pat_str,
                                                                          SEVERAL_SCRIPTS)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=40))
def test_encode_equals_tiktoken_gpt2_on_arbitrary_unicode(ours, tiktoken_gpt2, text):
    assert ours.encode(text, allowed_special="none") == tiktoken_gpt2.encode_ordinary(text)


def test_a_trained_tokenizer_equals_tiktoken_built_from_its_own_ranks():
    """Our trainer's output, handed to tiktoken as mergeable ranks, encodes the same."""
    text = SEVERAL_SCRIPTS * 3 + "the cat sat on the mat; the dog sat too. " * 20
    tok = BPETokenizer.train(text, 256 + 120 + 1, special_tokens=[EOT], pattern=GPT2_SPLIT_PATTERN)
    ranks = {tok.vocab[i]: i for i in range(256 + len(tok.merges))}
    enc = tiktoken.Encoding("ours", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                            special_tokens=tok.special_tokens)
    probe = text + " unseen words: zebra, 数学, 🙂!" + EOT
    assert tok.encode(probe) == enc.encode(probe, allowed_special="all")


def test_streaming_encode_is_lazy(ours):
    def endless():
        while True:
            yield "Some text, then a separator." + EOT
    first = list(islice(ours.encode_iterable(endless()), 20))
    assert len(first) == 20 and 50256 in first
