"""The fast paths change speed, never the answer.

* ``need_weights=False`` (PyTorch's fused ``F.scaled_dot_product_attention``) against the
  explicit path of ``mha.scaled_dot_product_attention``, in float32, and both against a
  by-hand reference;
* grouped-/multi-query attention (``num_kv_heads``) against an ordinary MHA whose key and
  value heads are repeated.

(Decoding with the KV cache against teacher forcing is in ``test_decoding.py``.)
"""
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha import MultiHeadAttention, causal_mask

F32 = dict(atol=1e-5, rtol=1e-4)  # float32: rounding differs between the two paths


def _heads(draw):
    kv = draw(st.sampled_from([1, 2, 3]))
    return kv * draw(st.sampled_from([1, 2])), kv  # (num_heads, num_kv_heads)


@st.composite
def problems(draw):
    """Random shapes (L != S allowed), head layouts, biases and masks."""
    H, kv = _heads(draw)
    d = draw(st.integers(1, 5))
    B, L, S = draw(st.integers(1, 3)), draw(st.integers(1, 7)), draw(st.integers(1, 7))
    self_attention = draw(st.booleans())
    if self_attention:
        S = L
    mask_kind = draw(st.sampled_from(["none", "LS", "B1LS", "BHLS", "B11S", "causal"]))
    return dict(B=B, L=L, S=S, H=H, kv=kv, d=d, bias=draw(st.booleans()),
                self_attention=self_attention, mask_kind=mask_kind,
                seed=draw(st.integers(0, 2**16)))


def _mask(kind, B, H, L, S, generator):
    """A boolean mask (True = may attend) in one of the broadcastable shapes."""
    shape = {"none": None, "LS": (L, S), "B1LS": (B, 1, L, S), "BHLS": (B, H, L, S),
             "B11S": (B, 1, 1, S), "causal": None}[kind]
    if kind == "causal":
        return causal_mask(L, S)
    if shape is None:
        return None
    mask = torch.rand(shape, generator=generator) < 0.6
    if kind != "B11S" and L > 1:
        mask[..., 0, :] = False  # at least one query row sees no key at all
    return mask


def _inputs(p):
    g = torch.Generator().manual_seed(p["seed"])
    torch.manual_seed(p["seed"])
    m = MultiHeadAttention(p["H"] * p["d"], p["H"], bias=p["bias"], num_kv_heads=p["kv"]).eval()
    D = p["H"] * p["d"]
    x = torch.randn(p["B"], p["L"], D, generator=g)
    mem = x if p["self_attention"] else torch.randn(p["B"], p["S"], D, generator=g)
    return m, x, mem, _mask(p["mask_kind"], p["B"], p["H"], p["L"], p["S"], g)


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@given(p=problems())
def test_fast_path_equals_explicit_path(grad, p):
    m, x, mem, mask = _inputs(p)
    with torch.set_grad_enabled(grad):
        fast, none = m(x, mem, mask=mask)
        explicit, weights = m(x, mem, mask=mask, need_weights=True)
    assert none is None and weights.shape == (p["B"], p["H"], p["L"], p["S"])
    torch.testing.assert_close(fast, explicit, **F32)


@given(p=problems())
def test_fully_masked_rows_give_zero_attention_on_both_paths(p):
    m, x, mem, _ = _inputs(p)
    mask = torch.ones(p["L"], p["S"], dtype=torch.bool)
    mask[0] = False  # query 0 may attend to nothing
    with torch.no_grad():
        fast, _ = m(x, mem, mask=mask)
        explicit, weights = m(x, mem, mask=mask, need_weights=True)
    assert torch.isfinite(fast).all() and torch.isfinite(explicit).all()
    assert (weights[:, :, 0] == 0).all()
    # zero attention output, so the row is o_proj(0) = its bias (or 0 without bias)
    expected = m.o_proj.bias if p["bias"] else torch.zeros(m.d_model)
    torch.testing.assert_close(fast[:, 0], expected.expand(p["B"], -1), **F32)
    torch.testing.assert_close(explicit[:, 0], expected.expand(p["B"], -1), **F32)


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("bad, message", [
    (torch.ones(3, 5), "mask must be a boolean tensor"),
    (torch.ones(4, 5, dtype=torch.bool), "does not broadcast"),       # L + 1 rows
    (torch.ones(3, 6, dtype=torch.bool), "does not broadcast"),       # S + 1 columns
    (torch.ones(3, 1, 3, 5, dtype=torch.bool), "does not broadcast"),  # batch 3, not 2
    (torch.ones(1, 1, 1, 3, 5, dtype=torch.bool), "does not broadcast"),  # 5-D
], ids=["float", "rows", "columns", "batch", "5d"])
def test_bad_masks_are_rejected_on_both_paths(need_weights, bad, message):
    m = MultiHeadAttention(8, 2).eval()
    with pytest.raises(ValueError, match=message), torch.no_grad():
        m(torch.randn(2, 3, 8), torch.randn(2, 5, 8), mask=bad, need_weights=need_weights)


def _by_hand(m, query, key, mask=None):
    """Independent reference: separate projections, explicit softmax, repeated K/V heads."""
    B, L, D = query.shape
    H, kv, d = m.num_heads, m.num_kv_heads, m.head_dim
    q = m.q_proj(query).view(B, L, H, d).transpose(1, 2)
    k = m.k_proj(key).view(B, -1, kv, d).transpose(1, 2).repeat_interleave(H // kv, dim=1)
    v = m.v_proj(key).view(B, -1, kv, d).transpose(1, 2).repeat_interleave(H // kv, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # fully masked row -> 0
    return m.o_proj((weights @ v).transpose(1, 2).reshape(B, L, D))


@pytest.mark.parametrize("need_weights", [False, True])
@given(p=problems())
def test_both_paths_equal_a_by_hand_reference(need_weights, p):
    m, x, mem, mask = _inputs(p)
    with torch.no_grad():
        out, _ = m(x, mem, mask=mask, need_weights=need_weights)
        torch.testing.assert_close(out, _by_hand(m, x, mem, mask), **F32)


def test_gradients_reach_each_projection_separately():
    torch.manual_seed(0)
    m = MultiHeadAttention(8, 2, num_kv_heads=1)
    m(torch.randn(2, 3, 8))[0].square().sum().backward()
    for proj in (m.q_proj, m.k_proj, m.v_proj, m.o_proj):
        assert proj.weight.grad is not None and proj.weight.grad.abs().sum() > 0


# ------------------------------------------------------------------------ GQA / MQA
def _full_mha_with_repeated_kv_heads(gqa: MultiHeadAttention) -> MultiHeadAttention:
    """An ordinary MHA computing the same function: each K/V head copied to its group."""
    H, kv, d = gqa.num_heads, gqa.num_kv_heads, gqa.head_dim
    full = MultiHeadAttention(gqa.d_model, H, bias=gqa.q_proj.bias is not None).eval()
    # query head h reads key/value head h // (H / kv): repeat each kv head's d rows
    group = H // kv
    rows = torch.cat([(h // group) * d + torch.arange(d) for h in range(H)])
    with torch.no_grad():
        for name in ("q_proj", "o_proj"):
            getattr(full, name).load_state_dict(getattr(gqa, name).state_dict())
        for name in ("k_proj", "v_proj"):
            src, dst = getattr(gqa, name), getattr(full, name)
            dst.weight.copy_(src.weight[rows])
            if src.bias is not None:
                dst.bias.copy_(src.bias[rows])
    return full


@pytest.mark.parametrize("need_weights", [False, True])
@given(p=problems())
def test_gqa_and_mqa_equal_full_mha_with_repeated_kv_heads(need_weights, p):
    gqa, x, mem, mask = _inputs(p)
    full = _full_mha_with_repeated_kv_heads(gqa)
    assert full.k_proj.weight.shape[0] == gqa.k_proj.weight.shape[0] * p["H"] // p["kv"]
    with torch.no_grad():
        out, w = gqa(x, mem, mask=mask, need_weights=need_weights)
        expected, expected_w = full(x, mem, mask=mask, need_weights=need_weights)
    torch.testing.assert_close(out, expected, **F32)
    if need_weights:
        torch.testing.assert_close(w, expected_w, **F32)
