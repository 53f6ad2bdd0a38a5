"""The fast paths change speed, never the answer.

* ``need_weights=False`` (PyTorch's fused ``F.scaled_dot_product_attention``) against the
  explicit path of ``mha.scaled_dot_product_attention``, in float32;
* the packed q/k/v projection (one matrix multiply) against the three separate ones;
* grouped-/multi-query attention (``num_kv_heads``) against an ordinary MHA whose key and
  value heads are repeated;
* decoding with the KV cache against re-running the whole prefix.
"""
import copy
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch.overrides import TorchFunctionMode

from mha import KVCache, MultiHeadAttention, Transformer, causal_mask, greedy_decode

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


class _LinearShapes(TorchFunctionMode):
    """Records the weight shape of every ``F.linear`` call."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is F.linear:
            self.shapes.append(tuple(args[1].shape))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("kv", [4, 2, 1], ids=["mha", "gqa", "mqa"])
def test_self_attention_projects_q_k_v_in_one_matmul_with_the_same_result(kv):
    torch.manual_seed(0)
    m = MultiHeadAttention(16, 4, num_kv_heads=kv).eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad(), _LinearShapes() as calls:
        out, _ = m(x, mask=causal_mask(5))
    assert calls.shapes == [(16 + 2 * kv * 4, 16), (16, 16)]  # packed q|k|v, then o_proj
    with torch.no_grad():
        torch.testing.assert_close(out, _by_hand(m, x, x, causal_mask(5)), **F32)


def test_cross_attention_projects_k_and_v_together():
    torch.manual_seed(0)
    m = MultiHeadAttention(16, 4, num_kv_heads=2).eval()
    x, mem = torch.randn(2, 3, 16), torch.randn(2, 6, 16)
    with torch.no_grad(), _LinearShapes() as calls:
        out, _ = m(x, mem)
    assert sorted(calls.shapes) == sorted([(16, 16), (16, 16), (2 * 2 * 4, 16)])
    with torch.no_grad():
        torch.testing.assert_close(out, _by_hand(m, x, mem), **F32)


def test_packed_projection_follows_every_way_of_changing_the_weights():
    torch.manual_seed(0)
    m = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 4, 8)

    def check():
        with torch.no_grad():
            torch.testing.assert_close(m(x)[0], _by_hand(m, x, x), **F32)

    check()
    with torch.no_grad():
        m.k_proj.weight.mul_(2.0)                     # in place, tracked by autograd
    check()
    m.v_proj.weight.data.copy_(torch.randn(8, 8))     # through .data, not tracked
    check()
    m.q_proj.bias.data.zero_()
    check()
    m.load_state_dict({k: torch.randn_like(v) for k, v in m.state_dict().items()})
    check()
    m.k_proj.weight = torch.nn.Parameter(torch.randn(8, 8))  # a new tensor: no longer packed
    check()
    m2 = copy.deepcopy(m)
    x = x.double()
    m = m2.double()
    check()
    assert list(m.state_dict()) == [f"{p}_proj.{t}" for p in "qkvo" for t in ("weight", "bias")]
    with torch.no_grad(), _LinearShapes() as calls:  # .double() packed the weights again
        m(x)
    assert calls.shapes == [(24, 8), (8, 8)]


def test_a_hook_on_a_projection_still_sees_it_run():
    torch.manual_seed(0)
    m = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 3, 8)
    with torch.no_grad():
        packed, _ = m(x)
    seen = []
    handle = m.k_proj.register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
    with torch.no_grad():
        hooked, _ = m(x)
    handle.remove()
    assert seen == [(2, 3, 8)]
    torch.testing.assert_close(hooked, packed, **F32)


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


def test_gqa_cache_is_smaller_by_the_group_factor():
    torch.manual_seed(0)
    sizes = {}
    for kv in (8, 2, 1):
        m = MultiHeadAttention(64, 8, num_kv_heads=kv).eval()
        cache = KVCache()
        with torch.no_grad():
            for _ in range(5):
                m(torch.randn(3, 1, 64), cache=cache)
        assert cache.key.shape == cache.value.shape == (3, kv, 5, 8)
        sizes[kv] = cache.key.numel() + cache.value.numel()
    assert sizes[8] == 4 * sizes[2] == 8 * sizes[1] == 2 * 3 * 8 * 5 * 8


# ------------------------------------------------------------------------ KV cache
def test_kv_cache_appends_across_growth_of_its_buffer():
    cache = KVCache()
    pieces = []
    torch.manual_seed(0)
    for n in [3, 1, 1, 20, 1, 40, 2]:  # crosses the initial capacity more than once
        k, v = torch.randn(2, 3, n, 4), torch.randn(2, 3, n, 4)
        pieces.append((k, v))
        got_k, got_v = cache.update(k, v)
        assert torch.equal(got_k, torch.cat([p[0] for p in pieces], dim=-2))
        assert torch.equal(got_v, torch.cat([p[1] for p in pieces], dim=-2))
        assert len(cache) == got_k.shape[-2]
    assert torch.equal(cache.key, got_k) and torch.equal(cache.value, got_v)


def test_static_cache_projects_the_memory_once_and_reuses_it():
    torch.manual_seed(0)
    m = MultiHeadAttention(8, 2).eval()
    cache = KVCache(static=True)
    assert not cache.filled and cache.key is None and len(cache) == 0
    memory = torch.randn(2, 6, 8)
    x1, x2 = torch.randn(2, 1, 8), torch.randn(2, 1, 8)
    with torch.no_grad():
        first, _ = m(x1, memory, cache=cache)
        assert cache.filled and len(cache) == 6 and cache.key.shape == (2, 2, 6, 4)
        # the second step's memory argument is ignored: the cached projection is used
        second, _ = m(x2, torch.zeros(2, 6, 8), cache=cache)
        torch.testing.assert_close(first, m(x1, memory)[0], **F32)
        torch.testing.assert_close(second, m(x2, memory)[0], **F32)


@pytest.mark.parametrize("kv", [None, 2, 1], ids=["mha", "gqa", "mqa"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_gives_the_same_logits_at_every_step(kv, norm_first):
    torch.manual_seed(0)
    model = Transformer(11, 13, 16, 4, 2, 32, norm_first=norm_first, num_kv_heads=kv).eval()
    src = torch.randint(0, 11, (3, 5))
    tgt = torch.randint(0, 13, (3, 24))  # longer than the cache's first buffer (16)
    with torch.no_grad():
        memory = model.encode(src)
        full = model.decode(tgt, memory)  # teacher forcing: every position at once
        caches = model.new_caches()
        steps = [model.decode(tgt[:, t:t + 1], memory, caches=caches) for t in range(24)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **F32)
    assert all(len(self_c) == 24 and len(cross_c) == 5 for self_c, cross_c in caches)


@pytest.mark.parametrize("kv", [None, 1], ids=["mha", "mqa"])
def test_cached_and_uncached_greedy_decoding_agree(kv):
    torch.manual_seed(1)
    model = Transformer(17, 19, 32, 4, 2, 64, num_kv_heads=kv)
    src = torch.randint(3, 17, (4, 7))
    cached = greedy_decode(model, src, 40, bos_id=1, eos_id=None, use_cache=True)
    uncached = greedy_decode(model, src, 40, bos_id=1, eos_id=None, use_cache=False)
    assert cached.shape == (4, 40)
    assert torch.equal(cached, uncached)
