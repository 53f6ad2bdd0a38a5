"""Sampling filters against their definitions, on hand-written logits and by brute force."""
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from mha import top_k_logits, top_p_logits
from mha.sampling import sample_next

INF = float("-inf")
# probabilities 0.5, 0.25, 0.125, 0.125 (log-probabilities as logits)
LOGITS = torch.tensor([[math.log(0.5), math.log(0.25), math.log(0.125), math.log(0.125)]])


def kept(logits):
    return (logits != INF).squeeze(0).tolist()


def test_top_k_keeps_the_k_largest_logits():
    logits = torch.tensor([[1.0, 4.0, 3.0, -2.0, 0.5]])
    assert top_k_logits(logits, 2).tolist() == [[INF, 4.0, 3.0, INF, INF]]


def test_top_k_larger_than_the_vocabulary_keeps_everything():
    assert torch.equal(top_k_logits(LOGITS, 10), LOGITS)


@pytest.mark.parametrize("p, expected", [
    (0.3, [True, False, False, False]),   # 0.5 alone reaches 0.3
    (0.5, [True, False, False, False]),   # 0.5 reaches 0.5 exactly
    (0.6, [True, True, False, False]),    # 0.5 + 0.25 = 0.75 >= 0.6
    (0.8, [True, True, True, True]),      # 0.875 >= 0.8, tie at 0.125 is ordered by sort
    (1.0, [True, True, True, True]),
])
def test_top_p_keeps_the_smallest_prefix_reaching_p(p, expected):
    result = kept(top_p_logits(LOGITS, p))
    if p == 0.8:  # 0.5 + 0.25 + one of the two 0.125s reaches 0.875: three tokens
        assert sum(result) == 3 and result[:2] == [True, True]
    else:
        assert result == expected


def test_top_p_always_keeps_the_most_probable_token():
    logits = torch.tensor([[0.0, 0.0, 5.0]])
    assert kept(top_p_logits(logits, 1e-9)) == [False, False, True]


def test_kept_logits_keep_their_values():
    out = top_p_logits(LOGITS, 0.6)
    assert out[0, :2].tolist() == LOGITS[0, :2].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=8).map(torch.tensor),
       st.floats(0.01, 0.99))
def test_top_p_keeps_the_smallest_set_of_most_probable_tokens_reaching_p(values, p):
    """The definition, checked piece by piece on random logits (float64)."""
    probs = values.double().softmax(-1)
    keep = top_p_logits(values.double()[None], p)[0] != INF
    assert probs[keep].sum() >= p - 1e-12                              # reaches p
    if (~keep).any():
        assert probs[keep].min() >= probs[~keep].max()                 # the most probable ones
    assert probs[keep].sum() - probs[keep].min() < p + 1e-12           # none can be dropped


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=8).map(torch.tensor),
       st.integers(1, 10))
def test_top_k_matches_sorting(values, k):
    out = top_k_logits(values[None], k)[0]
    kth = sorted(values.tolist(), reverse=True)[min(k, len(values)) - 1]
    assert [o != INF for o in out.tolist()] == [v >= kth for v in values.tolist()]


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_top_k_rejects_k_below_one_or_fractional(bad):
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        top_k_logits(LOGITS, bad)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5])
def test_top_p_rejects_p_outside_zero_one(bad):
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\]"):
        top_p_logits(LOGITS, bad)


def test_temperature_zero_is_argmax():
    logits = torch.randn(5, 11, generator=torch.Generator().manual_seed(0))
    assert torch.equal(sample_next(logits, temperature=0), logits.argmax(-1, keepdim=True))


def test_sampling_is_reproducible_with_a_generator():
    logits = torch.randn(4, 50)
    a = sample_next(logits, 1.0, generator=torch.Generator().manual_seed(3))
    b = sample_next(logits, 1.0, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_samples_follow_the_tempered_distribution():
    """10 000 draws at temperature 2 against softmax(logits / 2), within 4 standard errors."""
    logits = torch.tensor([[2.0, 1.0, 0.0]]).expand(10_000, 3)
    draws = sample_next(logits, 2.0, generator=torch.Generator().manual_seed(0))[:, 0]
    freq = torch.bincount(draws, minlength=3).double() / 10_000
    expected = torch.tensor([2.0, 1.0, 0.0]).double().div(2).softmax(-1)
    assert torch.allclose(freq, expected, atol=4 * math.sqrt(0.25 / 10_000))


def test_filtered_tokens_are_never_sampled():
    logits = torch.zeros(2000, 6)
    logits[:, 0] = 3.0
    logits[:, 1] = 2.0
    draws = sample_next(logits, 1.0, top_k=2, generator=torch.Generator().manual_seed(0))
    assert set(draws.flatten().tolist()) == {0, 1}


def test_negative_temperature_is_rejected():
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        sample_next(LOGITS, -1.0)


# --- the order of the filters: transformers' temperature, top-k, top-p ---------------------

def transformers_kept(logits, temperature, top_k, top_p):
    """The tokens transformers' sampling warpers keep, in its order (the reference)."""
    from transformers.generation.logits_process import (
        LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper)
    warpers = LogitsProcessorList([TemperatureLogitsWarper(temperature)])
    if top_k is not None:
        warpers.append(TopKLogitsWarper(top_k))
    if top_p is not None:
        warpers.append(TopPLogitsWarper(top_p))
    filtered = warpers(None, logits)[0]
    return set((filtered != INF).nonzero().flatten().tolist())


@pytest.mark.parametrize("temperature, top_k, top_p, expected", [
    # top-k first: {0, 1} renormalised is (.57, .43), and .57 alone reaches 0.5;
    # top-p first would keep {0, 1} (.4 < 0.5 <= .4 + .3)
    (1.0, 2, 0.5, {0}),
    # temperature first: 0.5 squares the probabilities, (.53, .30, .13, .03); top-p
    # before the temperature would keep {0, 1}
    (0.5, None, 0.5, {0}),
    # temperature 2 flattens them to (.33, .28, .23, .16): 0.5 needs two tokens
    (2.0, None, 0.5, {0, 1}),
])
def test_sample_next_filters_in_transformers_order(temperature, top_k, top_p, expected):
    logits = torch.tensor([0.4, 0.3, 0.2, 0.1]).log()
    assert transformers_kept(logits[None], temperature, top_k, top_p) == expected
    draws = sample_next(logits.expand(2000, 4), temperature, top_k, top_p,
                        torch.Generator().manual_seed(0))
    assert set(draws.flatten().tolist()) == expected
