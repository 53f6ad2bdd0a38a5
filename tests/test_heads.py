"""split_heads / merge_heads: layout, inverse, errors."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha import merge_heads, repeat_kv, split_heads


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


def test_split_of_a_small_example_by_hand():
    # D = 4 columns, H = 2 heads: head 0 gets columns 0-1, head 1 columns 2-3
    x = torch.tensor([[[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]]])  # [1, L=3, 4]
    assert split_heads(x, 2).tolist() == [[[[0, 1], [10, 11], [20, 21]],
                                           [[2, 3], [12, 13], [22, 23]]]]


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


def test_repeat_kv_puts_the_copies_of_a_head_next_to_each_other():
    x = torch.tensor([1.0, 2.0]).view(1, 2, 1, 1)  # [B=1, H_kv=2, S=1, d=1]: heads K1, K2
    assert repeat_kv(x, 3).flatten().tolist() == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]


@given(B=st.integers(1, 3), kv=st.integers(1, 3), n_rep=st.integers(1, 4), S=st.integers(1, 5),
       d=st.integers(1, 4))
def test_repeat_kv_equals_repeat_interleave(B, kv, n_rep, S, d):
    x = torch.randn(B, kv, S, d)
    assert torch.equal(repeat_kv(x, n_rep), x.repeat_interleave(n_rep, dim=1))
