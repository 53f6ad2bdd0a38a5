"""mha.course.example.embed: a reproducible stand-in for a learned embedding table."""
import torch

from mha.course.example import SENTENCE, TRANSLATION, embed


def test_a_words_vector_does_not_depend_on_the_other_tokens():
    assert torch.equal(embed(["the"]), embed(["aardvark", "the"])[1:])
    assert torch.equal(embed(["aardvark"]), embed(["the", "aardvark", "zebra"])[1:2])
    assert torch.equal(embed(["chat"], d_model=16), embed(list(TRANSLATION), d_model=16)[1:2])


def test_a_repeated_word_gets_the_same_vector():
    vectors = embed(SENTENCE)
    assert vectors.shape == (6, 8)
    assert torch.equal(vectors[0], vectors[4])  # "the" ... "the"
    assert not torch.equal(vectors[0], vectors[1])


def test_vectors_depend_on_the_seed_and_are_reproducible():
    assert torch.equal(embed(["cat", "dog"], seed=3), embed(["cat", "dog"], seed=3))
    assert not torch.equal(embed(["cat", "dog"], seed=3), embed(["cat", "dog"], seed=4))


def test_no_tokens_give_an_empty_table():
    assert embed([], d_model=5).shape == (0, 5)
