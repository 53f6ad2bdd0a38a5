"""mha.MultiHeadAttention against nn.MultiheadAttention with copied weights; the RoPE and
ALiBi plumbing (rope_base, positions, attn_bias) against references written by hand."""
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from mha import KVCache, MultiHeadAttention, alibi_bias, apply_rope, causal_mask, padding_mask
from mha.course.references import torch_twin

configs = st.tuples(st.integers(1, 3), st.integers(1, 6), st.integers(1, 7),
                    st.integers(1, 4), st.integers(1, 5), st.booleans())


def _module(D, H, bias=True):
    return MultiHeadAttention(D, H, bias=bias).double().eval()


def _check_against_torch(config, seed, need_weights, cross):
    """Our module against nn.MultiheadAttention with the same weights: self-attention
    (key defaults to the query) or cross-attention to a memory of another length S."""
    B, L, S, H, d, bias = config
    torch.manual_seed(seed)
    ours = _module(H * d, H, bias)
    query = torch.randn(B, L, H * d, dtype=torch.float64)
    if cross:
        memory = torch.randn(B, S, H * d, dtype=torch.float64)
        out, weights = ours(query, memory, need_weights=need_weights)
    else:
        memory, S = query, L
        out, weights = ours(query, need_weights=need_weights)
    expected, expected_weights = torch_twin(ours)(query, memory, memory)
    assert out.shape == (B, L, H * d)
    torch.testing.assert_close(out, expected)
    if need_weights:
        assert weights.shape == (B, H, L, S)
        torch.testing.assert_close(weights.mean(dim=1), expected_weights)


@pytest.mark.parametrize("need_weights", [False, True])
@given(config=configs, seed=st.integers(0, 2**16))
def test_self_attention_matches_torch(need_weights, config, seed):
    _check_against_torch(config, seed, need_weights, cross=False)


@pytest.mark.parametrize("need_weights", [False, True])
@given(config=configs, seed=st.integers(0, 2**16))
def test_cross_attention_with_different_lengths_matches_torch(need_weights, config, seed):
    _check_against_torch(config, seed, need_weights, cross=True)


@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "explicit"])
def test_eval_mode_switches_attention_dropout_off(need_weights):
    """In eval mode dropout=0.5 must change nothing: equal to nn.MultiheadAttention (same
    weights, same dropout, eval mode) and the same output on every call."""
    torch.manual_seed(0)
    ours = MultiHeadAttention(8, 2, dropout=0.5).double().eval()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    first, _ = ours(x, need_weights=need_weights)
    torch.testing.assert_close(first, torch_twin(ours)(x, x, x)[0])
    torch.testing.assert_close(ours(x, need_weights=need_weights)[0], first)
    ours.train()  # and the same module does drop weights while training
    assert not torch.allclose(ours(x, need_weights=need_weights)[0], first)


def test_value_may_differ_from_key():
    ours = _module(8, 2)
    q, k, v = (torch.randn(2, n, 8, dtype=torch.float64) for n in (3, 5, 5))
    out, _ = ours(q, k, v)
    torch.testing.assert_close(out, torch_twin(ours)(q, k, v)[0])


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
    expected, expected_weights = torch_twin(ours)(q, kv, kv, attn_mask=~mask)
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
    expected, expected_weights = torch_twin(ours)(q, kv, kv, key_padding_mask=~mask[:, 0, 0])
    torch.testing.assert_close(out, expected)
    if need_weights:
        assert (weights[~mask.expand_as(weights)] == 0).all()
        torch.testing.assert_close(weights.mean(1), expected_weights)


def test_weights_rows_sum_to_one_per_head():
    _, weights = _module(8, 2)(torch.randn(2, 5, 8, dtype=torch.float64), need_weights=True)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 5, dtype=torch.float64))


def test_projections_are_d_model_by_d_model_linears():
    m = MultiHeadAttention(32, 4, bias=False)
    for proj in (m.q_proj, m.k_proj, m.v_proj, m.o_proj):
        assert isinstance(proj, torch.nn.Linear) and proj.weight.shape == (32, 32)
        assert proj.bias is None
    assert m.head_dim == 8


@pytest.mark.parametrize("num_heads", [0, -2, True])
def test_error_for_num_heads_that_is_not_a_positive_integer(num_heads):
    with pytest.raises(ValueError, match=f"num_heads must be a positive integer, got num_heads={num_heads}"):
        MultiHeadAttention(16, num_heads)


@pytest.mark.parametrize("num_kv_heads", [0, 3, True, 2.0])
def test_error_for_num_kv_heads_that_does_not_divide_num_heads(num_kv_heads):
    with pytest.raises(ValueError, match=f"num_kv_heads={num_kv_heads!r} must be a positive divisor"):
        MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads)


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


# ------------------------------------------------------------------ RoPE and ALiBi plumbing
def _attention_by_hand(m, x, positions=None, mask=None, bias=None):
    """Project, rotate q and k (if ``positions``), add ``bias``, mask, softmax: no mha code
    except the projections' weights and ``apply_rope``."""
    B, L, D = x.shape
    H, kv, d = m.num_heads, m.num_kv_heads, m.head_dim
    q = m.q_proj(x).view(B, L, H, d).transpose(1, 2)
    k = m.k_proj(x).view(B, L, kv, d).transpose(1, 2).repeat_interleave(H // kv, dim=1)
    v = m.v_proj(x).view(B, L, kv, d).transpose(1, 2).repeat_interleave(H // kv, dim=1)
    if positions is not None:
        q, k = apply_rope(q, positions), apply_rope(k, positions)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return m.o_proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, L, D))


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("kv", [4, 2], ids=["mha", "gqa"])
def test_rope_rotates_queries_and_keys_by_their_positions(need_weights, kv):
    m = MultiHeadAttention(16, 4, num_kv_heads=kv, rope_base=10000.0).double().eval()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    out, _ = m(x, mask=causal_mask(6), need_weights=need_weights)
    torch.testing.assert_close(out, _attention_by_hand(m, x, torch.arange(6), causal_mask(6)))


def test_rope_attention_depends_only_on_relative_positions():
    m = MultiHeadAttention(16, 4, rope_base=10000.0).double().eval()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    shifted, _ = m(x, mask=causal_mask(5), positions=torch.arange(5) + 11)
    torch.testing.assert_close(shifted, m(x, mask=causal_mask(5))[0])
    # ... but the order of the tokens does matter (without RoPE it would not, unmasked)
    reversed_positions, _ = m(x, positions=torch.arange(4, -1, -1))
    assert not torch.allclose(reversed_positions, m(x)[0])


@pytest.mark.parametrize("kv", [4, 1], ids=["mha", "mqa"])
def test_rope_with_a_cache_continues_at_the_cached_length(kv):
    m = MultiHeadAttention(16, 4, num_kv_heads=kv, rope_base=10000.0).double().eval()
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    full, _ = m(x, mask=causal_mask(7))
    cache = KVCache()
    prompt, _ = m(x[:, :3], mask=causal_mask(3), cache=cache)  # a prompt of 3, then 1 by 1
    steps = [m(x[:, t:t + 1], cache=cache)[0] for t in range(3, 7)]
    torch.testing.assert_close(torch.cat([prompt, *steps], dim=1), full)


def test_rope_is_for_self_attention_only():
    m = MultiHeadAttention(16, 4, rope_base=10000.0)
    with pytest.raises(ValueError, match="rope_base is for self-attention"):
        m(torch.randn(1, 3, 16), torch.randn(1, 5, 16))


def test_rope_needs_an_even_head_dim():
    with pytest.raises(ValueError, match="head_dim = d_model / num_heads must be even.*head_dim=3"):
        MultiHeadAttention(12, 4, rope_base=10000.0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_attn_bias_is_added_to_the_scores_before_the_mask(need_weights):
    m = MultiHeadAttention(16, 4).double().eval()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    bias = alibi_bias(4, 6).double()  # [H, L, S]
    out, _ = m(x, mask=causal_mask(6), attn_bias=bias, need_weights=need_weights)
    torch.testing.assert_close(out, _attention_by_hand(m, x, None, causal_mask(6), bias))


@pytest.mark.parametrize("need_weights", [False, True])
def test_attn_bias_alone_acts_like_a_float_mask_of_torch_sdpa(need_weights):
    m = MultiHeadAttention(8, 2, bias=False).double().eval()
    x = torch.randn(1, 4, 8, dtype=torch.float64)
    bias = torch.randn(1, 2, 4, 4, dtype=torch.float64) * 3
    with torch.no_grad():
        q, k, v = (proj(x).view(1, 4, 2, 4).transpose(1, 2)
                   for proj in (m.q_proj, m.k_proj, m.v_proj))
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        expected = m.o_proj(expected.transpose(1, 2).reshape(1, 4, 8))
        out, _ = m(x, attn_bias=bias, need_weights=need_weights)
    torch.testing.assert_close(out, expected)


def test_a_bias_constant_along_each_row_changes_nothing():
    m = MultiHeadAttention(8, 2).double().eval()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    row_constant = torch.randn(2, 2, 5, 1, dtype=torch.float64) * 10
    _, weights = m(x, attn_bias=row_constant, need_weights=True)
    torch.testing.assert_close(weights, m(x, need_weights=True)[1])


@pytest.mark.parametrize("bias, message", [
    (torch.zeros(5, 5, dtype=torch.bool), "attn_bias must be a floating-point tensor"),
    (torch.zeros(3, 5, 5), r"attn_bias of shape \[3, 5, 5\] does not broadcast"),
])
def test_error_for_a_bad_attn_bias(bias, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(8, 2)(torch.randn(1, 5, 8), attn_bias=bias)
