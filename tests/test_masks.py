"""causal_mask and padding_mask."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha import causal_mask, padding_mask


def test_square_causal_mask_by_hand():
    assert causal_mask(3).int().tolist() == [[1, 0, 0],
                                             [1, 1, 0],
                                             [1, 1, 1]]


def test_causal_mask_with_more_keys_than_queries_by_hand():
    # 2 new queries at positions 2 and 3 of a sequence of 4 (2 tokens already cached)
    assert causal_mask(2, 4).int().tolist() == [[1, 1, 1, 0],
                                                [1, 1, 1, 1]]


def test_empty_causal_masks():
    assert causal_mask(0).shape == (0, 0) and causal_mask(0, 3).shape == (0, 3)


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
