"""causal_mask and padding_mask."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha import causal_mask, padding_mask


@given(L=st.integers(0, 8), extra=st.integers(0, 8))
def test_causal_mask_equals_tril_with_offset(L, extra):
    S = L + extra
    expected = torch.ones(L, S).tril(S - L).bool()
    assert torch.equal(causal_mask(L, S), expected)


def test_causal_mask_defaults_to_square_lower_triangle():
    assert torch.equal(causal_mask(4), torch.ones(4, 4, dtype=torch.bool).tril())


@given(L=st.integers(1, 8), extra=st.integers(0, 8))
def test_query_i_sees_exactly_keys_up_to_its_absolute_position(L, extra):
    S = L + extra
    mask = causal_mask(L, S)
    for i in range(L):
        position = S - L + i
        assert mask[i, :position + 1].all() and not mask[i, position + 1:].any()


def test_single_new_query_sees_the_whole_cache():
    assert causal_mask(1, 9).all()


def test_padding_mask_shape_and_values():
    mask = padding_mask(torch.tensor([3, 1, 0]), 4)
    assert mask.shape == (3, 1, 1, 4) and mask.dtype == torch.bool
    assert mask[:, 0, 0].tolist() == [[True, True, True, False], [True, False, False, False],
                                      [False, False, False, False]]


def test_padding_mask_rejects_lengths_longer_than_s():
    with pytest.raises(ValueError, match=r"0..S=4.*\[2, 5\]"):
        padding_mask(torch.tensor([2, 5]), 4)
