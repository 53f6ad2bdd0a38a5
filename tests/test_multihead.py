"""mha.MultiHeadAttention against nn.MultiheadAttention with copied weights."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import torch_mha_like
from mha import MultiHeadAttention, causal_mask, padding_mask

configs = st.tuples(st.integers(1, 3), st.integers(1, 6), st.integers(1, 7),
                    st.integers(1, 4), st.integers(1, 5), st.booleans())


def _module(D, H, bias=True):
    return MultiHeadAttention(D, H, bias=bias).double().eval()


@pytest.mark.parametrize("need_weights", [False, True])
@given(config=configs, seed=st.integers(0, 2**16))
def test_self_attention_matches_torch(need_weights, config, seed):
    B, L, _, H, d, bias = config
    torch.manual_seed(seed)
    ours = _module(H * d, H, bias)
    x = torch.randn(B, L, H * d, dtype=torch.float64)
    out, _ = ours(x, need_weights=need_weights)
    expected, _ = torch_mha_like(ours)(x, x, x, need_weights=False)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("need_weights", [False, True])
@given(config=configs, seed=st.integers(0, 2**16))
def test_cross_attention_with_different_lengths_matches_torch(need_weights, config, seed):
    B, L, S, H, d, bias = config
    torch.manual_seed(seed)
    ours = _module(H * d, H, bias)
    query = torch.randn(B, L, H * d, dtype=torch.float64)
    memory = torch.randn(B, S, H * d, dtype=torch.float64)
    out, weights = ours(query, memory, need_weights=need_weights)
    expected, expected_weights = torch_mha_like(ours)(query, memory, memory)
    assert out.shape == (B, L, H * d)
    torch.testing.assert_close(out, expected)
    if need_weights:
        assert weights.shape == (B, H, L, S)
        torch.testing.assert_close(weights.mean(dim=1), expected_weights)


def test_value_may_differ_from_key():
    ours = _module(8, 2)
    q, k, v = (torch.randn(2, n, 8, dtype=torch.float64) for n in (3, 5, 5))
    out, _ = ours(q, k, v)
    torch.testing.assert_close(out, torch_mha_like(ours)(q, k, v)[0])


@pytest.mark.parametrize("need_weights", [False, True])
@given(L=st.integers(1, 6), extra=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_causal_mask_matches_torch_with_inverted_polarity(need_weights, L, extra, seed):
    torch.manual_seed(seed)
    S = L + extra
    ours = _module(12, 3)
    q = torch.randn(2, L, 12, dtype=torch.float64)
    kv = torch.randn(2, S, 12, dtype=torch.float64)
    mask = causal_mask(L, S)
    out, weights = ours(q, kv, mask=mask, need_weights=need_weights)
    expected, expected_weights = torch_mha_like(ours)(q, kv, kv, attn_mask=~mask)
    torch.testing.assert_close(out, expected)
    if need_weights:
        torch.testing.assert_close(weights.mean(1), expected_weights)


@pytest.mark.parametrize("need_weights", [False, True])
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=4), L=st.integers(1, 5),
       seed=st.integers(0, 2**16))
def test_padding_mask_matches_torch_key_padding_mask(need_weights, lengths, L, seed):
    torch.manual_seed(seed)
    B, S = len(lengths), max(lengths)
    ours = _module(8, 4)
    q = torch.randn(B, L, 8, dtype=torch.float64)
    kv = torch.randn(B, S, 8, dtype=torch.float64)
    mask = padding_mask(torch.tensor(lengths), S)
    out, weights = ours(q, kv, mask=mask, need_weights=need_weights)
    expected, expected_weights = torch_mha_like(ours)(q, kv, kv, key_padding_mask=~mask[:, 0, 0])
    torch.testing.assert_close(out, expected)
    if need_weights:
        assert (weights[~mask.expand_as(weights)] == 0).all()
        torch.testing.assert_close(weights.mean(1), expected_weights)


def test_fast_and_explicit_paths_agree_in_float32():
    ours = MultiHeadAttention(64, 8).eval()
    q, kv = torch.randn(3, 9, 64), torch.randn(3, 13, 64)
    mask = padding_mask(torch.tensor([13, 4, 1]), 13)
    fast, none = ours(q, kv, mask=mask)
    explicit, weights = ours(q, kv, mask=mask, need_weights=True)
    assert none is None and weights.shape == (3, 8, 9, 13)
    torch.testing.assert_close(fast, explicit, atol=1e-5, rtol=1e-4)


def test_weights_rows_sum_to_one_per_head():
    _, weights = _module(8, 2)(torch.randn(2, 5, 8, dtype=torch.float64), need_weights=True)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 5, dtype=torch.float64))


def test_projections_are_d_model_by_d_model_linears():
    m = MultiHeadAttention(32, 4, bias=False)
    for proj in (m.q_proj, m.k_proj, m.v_proj, m.o_proj):
        assert isinstance(proj, torch.nn.Linear) and proj.weight.shape == (32, 32)
        assert proj.bias is None
    assert m.head_dim == 8


@pytest.mark.parametrize("num_heads", [0, -2])
def test_error_for_non_positive_num_heads(num_heads):
    with pytest.raises(ValueError, match=f"num_heads must be a positive integer, got num_heads={num_heads}"):
        MultiHeadAttention(16, num_heads)


def test_error_when_d_model_not_divisible():
    with pytest.raises(ValueError, match="d_model=500 is not divisible by num_heads=8"):
        MultiHeadAttention(500, 8)


def test_error_for_2d_query():
    with pytest.raises(ValueError, match=r"query must be a 3-D tensor \[B, L, D\]; got a 2-D"):
        MultiHeadAttention(8, 2)(torch.randn(5, 8))


def test_error_when_key_width_differs_from_module():
    with pytest.raises(ValueError, match=r"key has d_model=6 .* built with d_model=8"):
        MultiHeadAttention(8, 2)(torch.randn(1, 5, 8), torch.randn(1, 4, 6))


def test_error_when_value_width_differs_from_module():
    with pytest.raises(ValueError, match=r"value has d_model=4 .* built with d_model=8"):
        MultiHeadAttention(8, 2)(torch.randn(1, 5, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 4))


def test_error_when_key_and_value_lengths_differ():
    with pytest.raises(ValueError, match=r"same length S.*S=4.*S=3"):
        MultiHeadAttention(8, 2)(torch.randn(1, 5, 8), torch.randn(1, 4, 8), torch.randn(1, 3, 8))


def test_error_for_a_mask_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"mask of shape \[5, 5\] does not broadcast.*S=4"):
        MultiHeadAttention(8, 2)(torch.randn(1, 5, 8), torch.randn(1, 4, 8),
                                 mask=torch.ones(5, 5, dtype=torch.bool))


def test_error_for_a_float_mask():
    with pytest.raises(ValueError, match="mask must be a boolean tensor"):
        MultiHeadAttention(8, 2)(torch.randn(1, 5, 8), mask=torch.zeros(5, 5))
