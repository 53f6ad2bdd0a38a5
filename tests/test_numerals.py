"""Tests of the number-words task (mha.course.numerals) and the training helpers (mha.course.training)."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha.course.numerals import (BOS_ID, EOS_ID, MAX_NUMBER, PAD_ID, SRC_VOCAB, TGT_VOCAB, Vocab,
                          decode_source, decode_target, digit_alignment, encode_source, encode_target,
                          make_batch, number_to_words, pad_sequences, random_batches,
                          split_numbers)
from mha.course.training import (build_model, evaluate, exact_match, sequence_loss, shift_right,
                          teacher_forced_logits, token_accuracy, train, train_numeral_model,
                          translate)

WORD_VALUES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
WORD_VALUES.update({w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())})


def parse_words(text: str) -> int:
    """An independent reader of the words, to check number_to_words against."""
    total, current = 0, 0
    for word in text.split():
        if word == "thousand":
            total, current = total + current * 1000, 0
        elif word == "hundred":
            current *= 100
        elif word != "and":
            current += WORD_VALUES[word]
    return total + current


@pytest.mark.parametrize("n, words", [
    (0, "zero"), (7, "seven"), (13, "thirteen"), (20, "twenty"), (21, "twenty one"),
    (100, "one hundred"), (101, "one hundred and one"), (110, "one hundred and ten"),
    (307, "three hundred and seven"), (1000, "one thousand"), (2005, "two thousand and five"),
    (1010, "one thousand and ten"), (4321, "four thousand three hundred and twenty one"),
    (9999, "nine thousand nine hundred and ninety nine"),
])
def test_number_to_words_examples(n, words):
    assert number_to_words(n) == words


def test_every_number_reads_back_and_is_unique():
    texts = [number_to_words(n) for n in range(MAX_NUMBER + 1)]
    assert [parse_words(t) for t in texts] == list(range(MAX_NUMBER + 1))
    assert len(set(texts)) == len(texts)
    for t in texts:  # every word is in the source vocabulary
        SRC_VOCAB.encode(t.split())


@pytest.mark.parametrize("bad", [-1, MAX_NUMBER + 1, 3.0, True, "7"])
def test_number_to_words_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        number_to_words(bad)


@pytest.mark.parametrize("n, expected", [
    (0, [0]), (7, [0]), (13, [0, 0]), (40, [0, None]), (45, [0, 1]), (307, [0, None, 3]),
    (310, [0, 3, 3]), (1000, [0, None, None, None]), (4013, [0, None, 3, 3]),
    (4321, [0, 2, 5, 6]), (9090, [0, None, 3, None]),
])
def test_digit_alignment_examples(n, expected):
    assert digit_alignment(n) == expected


def test_digit_alignment_points_at_the_word_of_each_digit():
    number_words = set(WORD_VALUES) - {"zero"}
    for n in range(MAX_NUMBER + 1):
        words, digits = number_to_words(n).split(), str(n)
        alignment = digit_alignment(n)
        assert len(alignment) == len(digits)
        for place, (digit, index) in enumerate(zip(digits[::-1], alignment[::-1])):
            if index is None:
                assert digit == "0", n  # only a zero may lack a word
                continue
            value = WORD_VALUES[words[index]]
            if place == 1:  # tens: "forty" or a teen word
                assert value // 10 == int(digit), n
            else:  # ones, hundreds, thousands: "seven" or a teen word (ones only)
                assert value % 10 == int(digit) and (value < 10 or place == 0), n
            assert words[index] in number_words or n == 0


def test_vocabularies_share_special_ids():
    for vocab in (SRC_VOCAB, TGT_VOCAB):
        assert vocab.tokens[:3] == ("<pad>", "<bos>", "<eos>")
        assert (PAD_ID, BOS_ID, EOS_ID) == (0, 1, 2)
    assert len(TGT_VOCAB) == 13
    assert len(SRC_VOCAB) == 3 + 20 + 8 + 3


def test_vocab_encode_decode():
    vocab = Vocab(["a", "b"])
    assert vocab.encode(["b", "a"]) == [4, 3]
    assert vocab.decode([BOS_ID, 4, 3, EOS_ID, 3, PAD_ID]) == ["b", "a"]
    with pytest.raises(ValueError, match="'c'"):
        vocab.encode(["a", "c"])
    with pytest.raises(ValueError):
        Vocab(["a", "a"])


@given(st.integers(0, MAX_NUMBER))
def test_encode_decode_round_trip(n):
    words, digits = number_to_words(n), str(n)
    assert decode_source(encode_source(words)) == words
    ids = encode_target(digits)
    assert ids[-1] == EOS_ID and len(ids) == len(digits) + 1
    assert decode_target([BOS_ID] + ids + [PAD_ID, PAD_ID]) == digits


def test_split_is_disjoint_complete_and_seeded():
    train_a, test_a = split_numbers(n_test=1000, seed=0)
    train_b, test_b = split_numbers(n_test=1000, seed=0)
    assert (train_a, test_a) == (train_b, test_b)
    assert len(test_a) == 1000
    assert not set(train_a) & set(test_a)
    assert sorted(train_a + test_a) == list(range(MAX_NUMBER + 1))
    assert split_numbers(n_test=1000, seed=1)[1] != test_a
    with pytest.raises(ValueError):
        split_numbers(n_test=0)


def test_pad_sequences():
    out = pad_sequences([[5, 6, 7], [8]])
    assert out.tolist() == [[5, 6, 7], [8, PAD_ID, PAD_ID]]
    assert out.dtype == torch.long


def test_make_batch_shapes_padding_and_mask():
    batch = make_batch([7, 307, 4321])
    assert batch.src.shape == (3, 7)  # "four thousand three hundred and twenty one"
    assert batch.src_lengths.tolist() == [1, 4, 7]
    assert batch.labels.shape == (3, 5)
    assert batch.labels[0].tolist() == encode_target("7") + [PAD_ID] * 3
    assert batch.src_mask.shape == (3, 1, 1, 7)
    assert batch.src_mask[:, 0, 0].tolist() == (batch.src != PAD_ID).tolist()
    assert batch.sources[1] == "three hundred and seven"
    assert batch.targets == ["7", "307", "4321"]


def test_random_batches_are_seeded_and_cover_an_epoch():
    numbers = list(range(10))
    first = [b.numbers for b in random_batches(numbers, 5, steps=4, seed=3)]
    again = [b.numbers for b in random_batches(numbers, 5, steps=4, seed=3)]
    other = [b.numbers for b in random_batches(numbers, 5, steps=4, seed=4)]
    assert first == again and first != other
    assert sorted(first[0] + first[1]) == numbers  # each epoch sees every number once
    assert sorted(first[2] + first[3]) == numbers


def test_shift_right():
    labels = torch.tensor([[5, 6, EOS_ID], [7, EOS_ID, PAD_ID]])
    assert shift_right(labels).tolist() == [[BOS_ID, 5, 6], [BOS_ID, 7, EOS_ID]]
    with pytest.raises(ValueError):
        shift_right(labels[0])


def test_token_accuracy_ignores_padding_and_exact_match():
    labels = torch.tensor([[3, 4, PAD_ID], [5, EOS_ID, PAD_ID]])
    predicted = torch.tensor([[3, 9, 9], [5, EOS_ID, 9]])
    assert token_accuracy(predicted, labels) == pytest.approx(3 / 4)
    logits = torch.nn.functional.one_hot(predicted, 13).float()
    assert token_accuracy(logits, labels) == pytest.approx(3 / 4)
    assert exact_match(["307", "12"], ["307", "21"]) == 0.5
    with pytest.raises(ValueError):
        exact_match(["1"], [])


def test_teacher_forcing_is_causal():
    """Changing a later decoder input must not change the logits of earlier positions."""
    model = build_model(num_heads=2, d_model=16, num_layers=1, d_ff=32).eval()
    batch = make_batch([4321, 12])
    logits = teacher_forced_logits(model, batch)
    tampered = batch.labels.clone()
    tampered[:, 2] = TGT_VOCAB.ids["9"]
    with torch.no_grad():
        other = model(batch.src, shift_right(tampered), src_mask=batch.src_mask)
    assert torch.allclose(logits[:, :3], other[:, :3], atol=1e-6)  # inputs 0..2 unchanged
    assert not torch.allclose(logits[:, 3:], other[:, 3:], atol=1e-4)


def test_source_padding_does_not_change_outputs():
    model = build_model(num_heads=2, d_model=16, num_layers=1, d_ff=32).eval()
    alone = teacher_forced_logits(model, make_batch([7]))
    padded = teacher_forced_logits(model, make_batch([7, 4321]))  # source padded to 6 words
    assert torch.allclose(alone[0], padded[0, :alone.shape[1]], atol=1e-5)


def test_training_is_seeded():
    kwargs = dict(d_model=16, num_heads=2, num_layers=1, d_ff=32, steps=20, warmup=5,
                  cache=False)
    _, first = train_numeral_model(**kwargs)
    model, again = train_numeral_model(**kwargs)
    assert first.loss == again.loss
    assert not model.training


def test_training_memorises_a_few_numbers():
    numbers = [3, 14, 159, 2653]
    model = build_model(num_heads=2, d_model=16, num_layers=1, d_ff=32)
    history = train(model, numbers, steps=80, batch_size=4, warmup=5, lr=1e-2)
    assert history.loss[-1] < 0.05 < history.loss[0]
    assert evaluate(model, numbers)["exact_match"] == 1.0


def test_evaluate_and_translate_with_and_without_cache():
    model = build_model(num_heads=2, d_model=16, num_layers=1, d_ff=32)
    history = train(model, range(100), steps=10, batch_size=16, eval_numbers=[5, 50, 500],
                    eval_every=5)
    assert history.eval_step == [5, 10]
    assert history.progress_bar == ""
    scores = evaluate(model, [5, 50, 500])
    assert set(scores) == {"loss", "token_accuracy", "exact_match"}
    assert all(0 <= scores[k] <= 1 for k in ("token_accuracy", "exact_match"))
    batch = make_batch([5, 50, 500, 5000])
    assert translate(model, batch, use_cache=True) == translate(model, batch, use_cache=False)


def test_progress_bar_final_line(capsys):
    model = build_model(num_heads=2, d_model=16, num_layers=1, d_ff=32)
    history = train(model, range(20), steps=3, batch_size=4, progress=True)
    assert "3/3" in history.progress_bar and "100%" in history.progress_bar
    assert "3/3" in capsys.readouterr().out  # the live bar went to stdout


def test_sequence_loss_ignores_padding():
    labels = torch.tensor([[3, PAD_ID]])
    logits = torch.zeros(1, 2, 13)
    logits[0, 0, 3] = 10.0  # confident and right; position 1 is padding
    assert sequence_loss(logits, labels).item() < 1e-3
