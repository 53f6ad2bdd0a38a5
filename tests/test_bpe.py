"""Byte-level BPE: the pure functions worked by hand, training on minbpe's Wikipedia
example, and exact round trips for arbitrary text (hypothesis)."""
import functools

import pytest
from hypothesis import given, settings, strategies as st

from mha import BPETokenizer
from mha.bpe import get_stats, merge, split_text

TRAINING_TEXT = (
    "The quick brown fox jumps over the lazy dog. def forward(self, x): return x + 1\n"
    "注意力机制 is attention; 🙂 emoji too. " * 20
)


@pytest.fixture(scope="module")
def tokenizer():
    return BPETokenizer.train(TRAINING_TEXT, 300)


def test_get_stats_counts_adjacent_pairs():
    assert get_stats([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}


def test_merge_replaces_non_overlapping_occurrences_left_to_right():
    assert merge([1, 2, 3, 1, 2], (1, 2), 4) == [4, 3, 4]
    assert merge([5, 5, 5], (5, 5), 6) == [6, 5]


def test_wikipedia_example():
    """https://en.wikipedia.org/wiki/Byte_pair_encoding, as in minbpe's test.

    "aaabdaaabac" = 97 97 97 98 100 97 97 97 98 97 99. The pair (a, a) = (97, 97) occurs 4
    times (overlapping runs count) -> 256 = "aa": 256 97 98 100 256 97 98 97 99. Now
    (256, 97) and (97, 98) both occur twice; the tie goes to the smaller pair (97, 98) ->
    257 = "ab": 256 257 100 256 257 97 99. Then (256, 257) occurs twice -> 258 = "aaab".
    So the text is 258 d 258 a c, as with minbpe's tie rule ("aaa" first, then "aaab").
    """
    tok = BPETokenizer.train("aaabdaaabac", 256 + 3)
    assert tok.merges == {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert tok.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"


def test_ids_below_256_are_the_utf8_bytes():
    tok = BPETokenizer()
    assert tok.vocab_size == 256
    assert tok.encode("aé") == [97, 0xC3, 0xA9]


def test_training_reaches_the_requested_vocab_size(tokenizer):
    assert tokenizer.vocab_size == 300
    assert max(tokenizer.encode(TRAINING_TEXT)) < 300


def test_training_compresses_the_training_text(tokenizer):
    # 44 merges of the most frequent pairs save more than a third of the bytes
    assert len(tokenizer.encode(TRAINING_TEXT)) < 0.65 * len(TRAINING_TEXT.encode("utf-8"))


def test_merges_never_cross_a_chunk_boundary(tokenizer):
    # "." and " " are different chunks, so no token contains ". "
    assert all(b". " not in tokenizer.vocab[i] for i in range(tokenizer.vocab_size))


def test_vocab_size_below_256_is_rejected():
    with pytest.raises(ValueError, match="vocab_size must be >= 256"):
        BPETokenizer.train("abc", 100)


def test_training_stops_when_no_pair_is_left():
    assert BPETokenizer.train("ab", 1000).vocab_size == 257


def test_decode_rejects_an_id_outside_the_vocabulary(tokenizer):
    with pytest.raises(ValueError, match="outside this tokenizer's vocabulary"):
        tokenizer.decode([300])


@pytest.mark.parametrize("text", ["", "?", "hello world", "注意力机制", "🙂👍🏽 emoji", "안녕하세요",
                                  "tabs\tand\n\nnewlines   ", "x²+y₂ ½ Ⅻ"])
def test_round_trip_on_hand_picked_strings(tokenizer, text):
    assert tokenizer.decode(tokenizer.encode(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trip_on_arbitrary_text(tokenizer, text):
    ids = tokenizer.encode(text)
    assert all(0 <= i < tokenizer.vocab_size for i in ids)
    assert tokenizer.decode(ids) == text


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_split_covers_every_character(text):
    assert "".join(split_text(text)) == text


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=200), st.integers(256, 320))
def test_a_tokenizer_trained_on_any_text_round_trips_it(text, vocab_size):
    tok = BPETokenizer.train(text, vocab_size)
    assert tok.decode(tok.encode(text)) == text


def test_save_and_load_give_the_same_tokenizer(tokenizer, tmp_path):
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    loaded = BPETokenizer.load(path)
    assert loaded.merges == tokenizer.merges
    assert loaded.encode(TRAINING_TEXT) == tokenizer.encode(TRAINING_TEXT)


def test_load_rejects_a_file_that_is_not_a_saved_tokenizer(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"merges": []}')
    with pytest.raises(ValueError, match="not a tokenizer saved by"):
        BPETokenizer.load(path)


def naive_merges(text, vocab_size):
    """Reference: recount every pair of every chunk occurrence from scratch each round."""
    words = [list(chunk.encode("utf-8")) for chunk in split_text(text)]
    merges = {}
    for idx in range(256, vocab_size):
        stats = {}
        for ids in words:
            get_stats(ids, stats)
        if not stats:
            break
        pair = max(stats, key=lambda p: (stats[p], -p[0], -p[1]))
        words = [merge(ids, pair, idx) for ids in words]
        merges[pair] = idx
    return merges


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="ab cd.\n1é", max_size=300), st.integers(256, 300))
def test_training_equals_recounting_from_scratch_every_round(text, vocab_size):
    assert BPETokenizer.train(text, vocab_size).merges == naive_merges(text, vocab_size)


def test_encode_applies_merges_in_the_order_they_were_learned():
    """(a, b) was learned before (b, c): "abc" is "ab" + "c", not "a" + "bc"."""
    tok = BPETokenizer({(97, 98): 256, (98, 99): 257})
    assert tok.encode("abc") == [256, 99]
    tok = BPETokenizer({(98, 99): 256, (97, 98): 257})
    assert tok.encode("abc") == [97, 256]


@functools.cache
def small_alphabet_tokenizer():
    return BPETokenizer.train("tatatat see seen sees the set tent nests. eaten tea\n" * 5, 300)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="aeiou tdnsr.\n", max_size=80))
def test_encode_equals_replaying_every_merge_in_order(tokenizer_text):
    """Reference: apply the learned merges one after the other to each chunk."""
    tok = small_alphabet_tokenizer()
    expected = []
    for chunk in split_text(tokenizer_text):
        ids = list(chunk.encode("utf-8"))
        for pair, idx in tok.merges.items():
            ids = merge(ids, pair, idx)
        expected += ids
    assert tok.encode(tokenizer_text) == expected


# --- special tokens ----------------------------------------------------------------------

EOT = "<|endoftext|>"
DOCUMENTS = EOT.join(["the cat sat on the mat.", "the dog sat on the log.", "a cat and a dog."] * 15)


@functools.cache
def tokenizer_with_eot():
    return BPETokenizer.train(DOCUMENTS, 256 + 15 + 1, special_tokens=[EOT])


def test_a_special_token_takes_the_id_after_the_merges_and_counts_in_vocab_size():
    tok = tokenizer_with_eot()
    assert tok.vocab_size == 272 and len(tok.merges) == 15
    assert tok.special_tokens == {EOT: 271}


def test_a_special_token_is_encoded_whole_and_decoded_back():
    tok = tokenizer_with_eot()
    ids = tok.encode("the cat" + EOT + "the dog")
    assert ids == tok.encode("the cat") + [271] + tok.encode("the dog")
    assert tok.decode(ids) == "the cat" + EOT + "the dog"


def test_training_never_merges_the_bytes_of_a_special_token():
    # "<|endoftext|>" occurs 44 times, more than most words: as plain text its pieces
    # ("<|", "endoftext", "|>") would be among the first merges
    plain = BPETokenizer.train(DOCUMENTS, 256 + 15)
    assert any(b"endoftext" in token or b"<|" in token for token in plain.vocab.values())
    tok = tokenizer_with_eot()
    merged = [tok.vocab[i] for i in tok.merges.values()]
    assert not any(set(token) & set(b"<|>") or b"endo" in token for token in merged)


def test_special_tokens_can_be_encoded_as_plain_text():
    tok = tokenizer_with_eot()
    assert tok.encode(DOCUMENTS, allowed_special="none") == tok.encode_ordinary(DOCUMENTS)
    assert 271 not in tok.encode_ordinary(DOCUMENTS)
    with pytest.raises(ValueError, match="does not have"):
        tok.encode("x", allowed_special={"<|im_start|>"})


def test_the_longer_of_two_overlapping_special_tokens_wins():
    tok = BPETokenizer(special_tokens=[EOT, EOT + EOT])  # ids 256, 257
    assert tok.encode("a" + EOT + EOT + EOT + "b") == [97, 257, 256, 98]


def test_save_and_load_keep_the_special_tokens(tmp_path):
    tok = tokenizer_with_eot()
    tok.save(tmp_path / "tok.json")
    loaded = BPETokenizer.load(tmp_path / "tok.json")
    assert loaded.special_tokens == tok.special_tokens
    assert loaded.encode(DOCUMENTS) == tok.encode(DOCUMENTS)


# --- streaming encode --------------------------------------------------------------------

def cut_into_pieces(text, cuts):
    cuts = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["the", " cat", "  ", "\n", "sat.", EOT, "<|", "endoftext",
                                 "|>", "注意", "🙂", "12", " 3", "\t"]), max_size=30),
       st.lists(st.integers(0, 10_000), max_size=12))
def test_encode_iterable_equals_encode_of_the_joined_text_wherever_it_is_cut(words, cuts):
    tok = BPETokenizer(tokenizer_with_eot().merges, [EOT, EOT + EOT])
    text = "".join(words)
    assert list(tok.encode_iterable(cut_into_pieces(text, cuts))) == tok.encode(text)


def test_encode_iterable_reads_its_input_lazily():
    tok = tokenizer_with_eot()
    taken = []

    def lines():
        for i in range(10**9):  # far more text than memory holds
            taken.append(i)
            yield "the cat sat on the mat." + EOT

    first = []
    for i in tok.encode_iterable(lines()):
        first.append(i)
        if len(first) == 50:
            break
    assert 271 in first and len(taken) < 20
