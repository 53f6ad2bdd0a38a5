"""Causal attention without a mask tensor: ``is_causal=True`` of mha.MultiHeadAttention.

When queries and keys are the same positions (L == S) the causal case reaches
``F.scaled_dot_product_attention(..., is_causal=True)`` with no ``[L, L]`` mask; in every
other case (a cache, L < S; a padding mask; ALiBi; ``need_weights``) the explicit
bottom-right mask is built. Each case is checked against the explicit mask
(``mask=causal_mask(L, S)``, the path without the shortcut) and against references:
``nn.MultiheadAttention`` with the same weights, or ``F.scaled_dot_product_attention``.
"""
import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import mha
import mha.multihead
from mha import GPT, GPTConfig, KVCache, MultiHeadAttention, causal_mask, padding_mask
from mha.course.references import torch_twin

F32 = dict(atol=1e-5, rtol=1e-4)


def _module_and_input(B=2, L=7, D=16, H=4, seed=0):
    torch.manual_seed(seed)
    return MultiHeadAttention(D, H).eval(), torch.randn(B, L, D, requires_grad=True)


def _output_and_grads(module, x, **kwargs):
    """The output and the gradients of a fixed function of it, w.r.t. ``x`` and every weight."""
    out, _ = module(x, **kwargs)
    loss = (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum()
    grads = torch.autograd.grad(loss, [x, *module.parameters()])
    return out, grads


def _assert_same(a, b):
    (out_a, grads_a), (out_b, grads_b) = a, b
    torch.testing.assert_close(out_a, out_b, **F32)
    for ga, gb in zip(grads_a, grads_b, strict=True):
        torch.testing.assert_close(ga, gb, **F32)


def test_causal_self_attention_equals_the_explicit_mask_and_nn_multiheadattention():
    m, x = _module_and_input()
    L = x.shape[1]
    fast = _output_and_grads(m, x, is_causal=True)
    explicit = _output_and_grads(m, x, mask=causal_mask(L))
    _assert_same(fast, explicit)
    twin = torch_twin(m)
    theirs, _ = twin(x, x, x, attn_mask=~causal_mask(L), need_weights=False)
    torch.testing.assert_close(fast[0], theirs, **F32)


def test_causal_path_hands_no_mask_to_the_fused_kernel(monkeypatch):
    """The fused kernel gets ``is_causal=True`` and ``attn_mask=None``; no mask is built."""
    calls, built = [], []
    original_sdpa = F.scaled_dot_product_attention

    def spy_sdpa(*args, **kwargs):
        calls.append((kwargs.get("attn_mask"), kwargs.get("is_causal")))
        return original_sdpa(*args, **kwargs)

    def spy_causal_mask(*args, **kwargs):
        built.append(args)
        return causal_mask(*args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy_sdpa)
    monkeypatch.setattr(mha.multihead, "causal_mask", spy_causal_mask)
    m, x = _module_and_input()
    m(x, is_causal=True)
    assert calls == [(None, True)] and built == []


def test_a_gpt_forward_builds_no_causal_mask(monkeypatch):
    built = []
    monkeypatch.setattr(mha.multihead, "causal_mask",
                        lambda *a, **k: built.append(a) or causal_mask(*a, **k))
    model = GPT(GPTConfig.gpt2(50, 32, 16, 2, 2)).eval()
    model(torch.randint(50, (2, 9)))
    assert built == []


def _largest_allocation(fn) -> int:
    """Bytes of the largest single CPU allocation made while ``fn`` runs (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return max(e.cpu_memory_usage for e in prof.events())


def test_the_causal_path_allocates_nothing_of_size_l_by_l():
    """Measured with PyTorch's memory profiler, forward and backward: every allocation on the
    causal path is smaller than ``L * L`` bytes (an ``[L, L]`` boolean mask); the explicit
    mask allocates at least that much, so the measure would see one."""
    L = 2048
    m, x = _module_and_input(B=1, L=L, D=16, H=2)

    def causal():
        m(x, is_causal=True)[0].sum().backward()

    def masked():
        m(x, mask=causal_mask(L))[0].sum().backward()

    assert _largest_allocation(masked) >= L * L
    assert _largest_allocation(causal) < L * L


def test_padding_and_causal_together_equal_the_combined_mask_and_nn_multiheadattention():
    m, x = _module_and_input(B=3, L=6)
    lengths = torch.tensor([6, 4, 1])  # right padding: key 0 is real in every row
    pad = padding_mask(lengths, 6)  # [B, 1, 1, S]
    with_flag = _output_and_grads(m, x, mask=pad, is_causal=True)
    explicit = _output_and_grads(m, x, mask=pad & causal_mask(6))
    _assert_same(with_flag, explicit)
    theirs, _ = torch_twin(m)(x, x, x, attn_mask=~causal_mask(6),
                              key_padding_mask=~pad[:, 0, 0], need_weights=False)
    torch.testing.assert_close(with_flag[0], theirs, **F32)


def test_padding_alone_is_unchanged_by_the_causal_branch():
    m, x = _module_and_input(B=3, L=6)
    pad = padding_mask(torch.tensor([6, 4, 2]), 6)
    ours = _output_and_grads(m, x, mask=pad)
    theirs, _ = torch_twin(m)(x, x, x, key_padding_mask=~pad[:, 0, 0], need_weights=False)
    torch.testing.assert_close(ours[0], theirs, **F32)


@pytest.mark.parametrize("L, S", [(3, 8), (8, 8)])
def test_cross_attention_causal_is_bottom_right_when_l_differs_from_s(L, S):
    """With L < S the L queries are the last L positions: query i sees keys 0 .. S - L + i
    (F.scaled_dot_product_attention's own is_causal would align top-left: 0 .. i)."""
    m, query = _module_and_input(B=2, L=L)
    memory = torch.randn(2, S, 16)
    with_flag = _output_and_grads(m, query, key=memory, is_causal=True)
    explicit = _output_and_grads(m, query, key=memory, mask=causal_mask(L, S))
    _assert_same(with_flag, explicit)
    theirs, _ = torch_twin(m)(query, memory, memory, attn_mask=~causal_mask(L, S),
                              need_weights=False)
    torch.testing.assert_close(with_flag[0], theirs, **F32)


@pytest.mark.parametrize("need_weights", [False, True])
def test_cached_steps_with_l_less_than_s_equal_the_full_causal_pass(need_weights):
    """Prefill 5 tokens (L == S), then 2 tokens (L=2 < S=7), then 1: the cached passes
    equal the rows of one causal pass over all 8 tokens (a cache is for inference: it
    writes in place, so there are no gradients to compare)."""
    m, x = _module_and_input(B=2, L=8)
    with torch.no_grad():
        full, _ = m(x, is_causal=True, need_weights=need_weights)
        cache = KVCache()
        parts = [m(x[:, a:b], cache=cache, is_causal=True, need_weights=need_weights)[0]
                 for a, b in ((0, 5), (5, 7), (7, 8))]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, **F32)


def test_need_weights_returns_causal_weights():
    m, x = _module_and_input()
    _, weights = m(x, is_causal=True, need_weights=True)
    L = x.shape[1]
    assert (weights[..., ~causal_mask(L)] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, L))


def test_causal_attention_equals_torch_sdpa_is_causal_per_head():
    """The fused-kernel path against F.scaled_dot_product_attention applied by hand to the
    projected, split heads."""
    m, x = _module_and_input()
    out, _ = m(x, is_causal=True)
    q, k, v = (mha.split_heads(p(x), 4) for p in (m.q_proj, m.k_proj, m.v_proj))
    expected = m.o_proj(mha.merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    torch.testing.assert_close(out, expected, **F32)


@pytest.mark.parametrize("positions", ["learned", "rope", "alibi"])
def test_gpt_logits_and_gradients_equal_those_with_an_explicit_causal_mask(positions):
    """mha.GPT (every block causal without a mask) against the same model whose blocks get
    ``mask=causal_mask(T)`` explicitly."""
    torch.manual_seed(0)
    model = GPT(GPTConfig.gpt2(50, 32, 16, 2, 2, positions=positions))
    tokens = torch.randint(50, (2, 10))

    def run(explicit):
        if explicit:
            forwards = [b.forward for b in model.blocks]
            for b, f in zip(model.blocks, forwards):
                b.forward = (lambda f: lambda x, mask=None, *a, **k:
                             f(x, causal_mask(x.shape[1]) if mask is None else mask, *a, **k))(f)
        try:
            loss = model.loss(tokens)
            return loss, torch.autograd.grad(loss, list(model.parameters()))
        finally:
            for b in model.blocks:
                b.__dict__.pop("forward", None)

    fast, explicit = run(False), run(True)
    torch.testing.assert_close(fast[0], explicit[0], **F32)
    for a, b in zip(fast[1], explicit[1], strict=True):
        torch.testing.assert_close(a, b, **F32)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_causal_path_on_a_gpu_equals_nn_multiheadattention(dtype):
    """On a CUDA GPU (where is_causal may take the flash kernel) against
    nn.MultiheadAttention's own causal path, same weights; bf16 at bf16's tolerance."""
    m, x = _module_and_input(B=2, L=256, D=64, H=4)
    twin = torch_twin(m).to("cuda", dtype)
    m, x = m.to("cuda", dtype), x.detach().to("cuda", dtype)
    ours, _ = m(x, is_causal=True)
    theirs, _ = twin(x, x, x, attn_mask=~causal_mask(256, device="cuda"), is_causal=True,
                     need_weights=False)
    tol = F32 if dtype == torch.float32 else dict(atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(ours, theirs, **tol)
    torch.testing.assert_close(ours, m(x, mask=causal_mask(256, device="cuda"))[0], **tol)
