"""split_heads / merge_heads: layout, inverse, errors."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha import merge_heads, split_heads


@given(B=st.integers(1, 3), L=st.integers(1, 6), H=st.integers(1, 5), d=st.integers(1, 6))
def test_head_i_holds_columns_i_times_d(B, L, H, d):
    x = torch.randn(B, L, H * d)
    heads = split_heads(x, H)
    assert heads.shape == (B, H, L, d)
    for i in range(H):
        torch.testing.assert_close(heads[:, i], x[:, :, i * d:(i + 1) * d])


@given(B=st.integers(1, 3), L=st.integers(1, 6), H=st.integers(1, 5), d=st.integers(1, 6))
def test_merge_heads_inverts_split_heads(B, L, H, d):
    x = torch.randn(B, L, H * d)
    torch.testing.assert_close(merge_heads(split_heads(x, H)), x)


def test_split_matches_explicit_column_loop():
    x = torch.randn(2, 5, 12)
    loop = torch.stack([x[..., 4 * i:4 * (i + 1)] for i in range(3)], dim=1)
    torch.testing.assert_close(split_heads(x, 3), loop)


def test_error_when_width_is_not_divisible_by_heads():
    with pytest.raises(ValueError, match="d_model=500 is not divisible by num_heads=8"):
        split_heads(torch.randn(1, 2, 500), 8)


def test_error_for_a_2d_input():
    with pytest.raises(ValueError, match=r"3-D tensor \[B, L, D\].*2-D.*unsqueeze"):
        split_heads(torch.randn(4, 8), 2)


def test_error_when_merging_a_3d_tensor():
    with pytest.raises(ValueError, match=r"4-D tensor \[B, H, L, d\]"):
        merge_heads(torch.randn(2, 3, 4))
