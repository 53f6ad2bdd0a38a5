"""mha.scaled_dot_product_attention: correctness against PyTorch, masking, gradients, errors."""
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from mha import scaled_dot_product_attention

dims = st.integers(1, 7)


@given(batch=st.lists(st.integers(1, 3), max_size=2), L=dims, S=dims, d_k=dims, d_v=dims,
       seed=st.integers(0, 2**16))
def test_matches_torch_sdpa_for_random_shapes(batch, L, S, d_k, d_v, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, L, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(*batch, S, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(*batch, S, d_v, generator=g, dtype=torch.float64)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (*batch, L, d_v)
    assert weights.shape == (*batch, L, S)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))


@given(L=dims, S=dims, d=dims, seed=st.integers(0, 2**16))
def test_matches_torch_sdpa_with_a_boolean_mask(L, S, d, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, 3, n, d, generator=g, dtype=torch.float64) for n in (L, S, S))
    mask = torch.rand(2, 1, L, S, generator=g) < 0.6
    mask[..., 0] = True  # PyTorch's own NaN policy for empty rows is tested separately
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_weights_are_softmax_over_keys_scaled_by_sqrt_dk():
    q, k, v = torch.randn(5, 16), torch.randn(7, 16), torch.randn(7, 3)
    _, weights = scaled_dot_product_attention(q, k, v)
    expected = torch.softmax(q @ k.T / math.sqrt(16), dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5))


def test_scaling_uses_true_division_not_floor_division():
    # Scores of 0.3*sqrt(d) and 1.7*sqrt(d): floor division would turn them into 0 and 1.
    d = 4
    q = torch.tensor([[1.0, 0, 0, 0]])
    k = torch.tensor([[0.6, 0, 0, 0], [3.4, 0, 0, 0]])
    _, weights = scaled_dot_product_attention(q, k, torch.eye(2))
    torch.testing.assert_close(weights, torch.softmax(torch.tensor([[0.3, 1.7]]), -1))


def test_masked_keys_get_exactly_zero_weight():
    q, k, v = torch.randn(4, 8), torch.randn(6, 8), torch.randn(6, 8)
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[:, 3:] = False
    _, weights = scaled_dot_product_attention(q, k, v, mask)
    assert (weights[:, 3:] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(4))


def test_mask_true_means_attend_not_block():
    q, k = torch.randn(1, 4), torch.randn(3, 4)
    v = torch.eye(3)
    only_key_1 = torch.tensor([[False, True, False]])
    out, _ = scaled_dot_product_attention(q, k, v, only_key_1)
    torch.testing.assert_close(out, torch.tensor([[0.0, 1.0, 0.0]]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_fully_masked_row_gives_zeros_not_nan(dtype):
    q, k, v = (torch.randn(3, 4, dtype=dtype) for _ in range(3))
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, True]])
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert (weights[1] == 0).all() and (out[1] == 0).all()
    assert torch.allclose(weights[[0, 2]].sum(-1).float(), torch.ones(2), atol=1e-2)


def test_fully_masked_row_has_finite_zero_gradients():
    q, k, v = (torch.randn(3, 4, requires_grad=True) for _ in range(3))
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, True]])
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert (q.grad[1] == 0).all()


def test_gradcheck_in_float64_with_a_mask():
    q, k, v = (torch.randn(2, n, 3, dtype=torch.float64, requires_grad=True) for n in (3, 4, 4))
    mask = torch.tensor([[True, False, True, True], [False, False, False, False],
                         [True, True, True, False]])
    assert torch.autograd.gradcheck(
        lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)[0], (q, k, v))


@pytest.mark.parametrize("p", [0.25, 0.5])
def test_dropout_zeroes_weights_and_rescales_the_rest_by_one_over_one_minus_p(p):
    q, k, v = torch.randn(16, 4), torch.randn(16, 4), torch.randn(16, 4)
    _, plain = scaled_dot_product_attention(q, k, v)
    _, dropped = scaled_dot_product_attention(q, k, v, dropout_p=p)
    kept = dropped != 0
    assert 0 < kept.float().mean() < 1
    # each kept weight is scaled up so that the expected weight stays the same
    torch.testing.assert_close(dropped[kept], plain[kept] / (1 - p))


def test_no_dropout_keeps_every_weight():
    q, k, v = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)
    _, weights = scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    assert (weights > 0).all()


@given(L=dims, S=dims, d=dims, seed=st.integers(0, 2**16))
def test_attn_bias_matches_torch_sdpa_with_a_float_mask(L, S, d, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, 3, n, d, generator=g, dtype=torch.float64) for n in (L, S, S))
    bias = torch.randn(3, L, S, generator=g, dtype=torch.float64) * 2
    out, _ = scaled_dot_product_attention(q, k, v, attn_bias=bias)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


def test_a_mask_wins_over_a_large_bias():
    q, k, v = torch.randn(1, 4), torch.randn(3, 4), torch.eye(3)
    bias = torch.tensor([[100.0, 0.0, 0.0]])  # key 0 favoured, but masked out
    _, weights = scaled_dot_product_attention(q, k, v, torch.tensor([[False, True, True]]),
                                              attn_bias=bias)
    assert weights[0, 0] == 0


def test_error_names_both_dims_when_query_and_key_widths_differ():
    with pytest.raises(ValueError, match=r"same last dimension d_k.*d_k=8.*d_k=4"):
        scaled_dot_product_attention(torch.randn(2, 8), torch.randn(3, 4), torch.randn(3, 4))


def test_error_when_key_and_value_lengths_differ():
    with pytest.raises(ValueError, match=r"same length S.*S=3.*S=5"):
        scaled_dot_product_attention(torch.randn(2, 4), torch.randn(3, 4), torch.randn(5, 4))


def test_error_when_mask_does_not_broadcast_to_scores():
    with pytest.raises(ValueError, match=r"does not broadcast.*L=2.*S=3"):
        scaled_dot_product_attention(torch.randn(2, 4), torch.randn(3, 4), torch.randn(3, 4),
                                     torch.ones(3, 2, dtype=torch.bool))


def test_error_when_mask_is_not_boolean():
    with pytest.raises(ValueError, match=r"boolean.*torch.float32.*mask == 0"):
        scaled_dot_product_attention(torch.randn(2, 4), torch.randn(3, 4), torch.randn(3, 4),
                                     torch.zeros(2, 3))
