"""The fixed-shape decoding step (``cache_position``) and ``compile=True`` of generate and
greedy_decode.

The fixed-shape step writes the new token's keys/values at a slot of the StaticKVCache's
buffer and attends over the whole buffer with a mask; it must give the logits of the
ordinary cached step (which attends over the filled part only), which the KV-cache tests
in test_generation.py / test_decoding.py already check against no cache at all. The
compiled tests are slow (compiling takes tens of seconds on a CPU).
"""
import pytest
import torch

import mha
from mha import GPT, GPTConfig, KVCache, StaticKVCache, Transformer

F32 = dict(atol=1e-5, rtol=1e-4)


def _gpt(style="gpt2", seed=0, **kwargs):
    torch.manual_seed(seed)
    make = GPTConfig.gpt2 if style == "gpt2" else GPTConfig.llama
    return GPT(make(61, 40, 32, 4, 2, **kwargs)).eval()


def _steps_both_ways(model, prompt, new_tokens, attention_mask=None):
    """Feed ``new_tokens`` [B, n] one by one after the prompt, through the ordinary cached
    step and through the fixed-shape step; return both lists of logits [B, V]."""
    T0, n = prompt.shape[1], new_tokens.shape[1]
    ordinary, fixed = model.new_caches(T0 + n), model.new_caches(T0 + n)
    full_mask = None
    if attention_mask is not None:
        full_mask = torch.cat([attention_mask, attention_mask.new_ones(len(prompt), n)], dim=1)
    out_a, out_b = [], []
    with torch.no_grad():
        model(prompt, ordinary, attention_mask=attention_mask)
        model(prompt, fixed, attention_mask=attention_mask)
        mask = attention_mask
        for t in range(n):
            token = new_tokens[:, t:t + 1]
            if mask is not None:
                mask = full_mask[:, :T0 + t + 1]
            out_a.append(model(token, ordinary, attention_mask=mask)[:, -1])
            out_b.append(model(token, fixed, attention_mask=full_mask,
                               cache_position=torch.tensor([T0 + t]))[:, -1])
    return out_a, out_b


@pytest.mark.parametrize("style, kv", [("gpt2", None), ("llama", 2)])
def test_fixed_shape_gpt_steps_equal_ordinary_cached_steps(style, kv):
    model = _gpt(style, num_kv_heads=kv)
    prompt, new = torch.randint(61, (2, 5)), torch.randint(61, (2, 4))
    for a, b in zip(*_steps_both_ways(model, prompt, new)):
        torch.testing.assert_close(b, a, **F32)


def test_fixed_shape_gpt_steps_equal_ordinary_ones_with_left_padding():
    model = _gpt("llama")
    prompt, new = torch.randint(61, (2, 6)), torch.randint(61, (2, 3))
    attention_mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1]])
    for a, b in zip(*_steps_both_ways(model, prompt, new, attention_mask)):
        torch.testing.assert_close(b, a, **F32)


def test_fixed_shape_step_has_the_same_shapes_at_every_position():
    """The step reads the whole buffer, so no tensor's shape depends on the position."""
    model = _gpt()
    caches = model.new_caches(12)
    seen = set()
    original = StaticKVCache.write_at

    def spy(self, position, key, value):
        k, v = original(self, position, key, value)
        seen.add(tuple(k.shape))
        return k, v

    StaticKVCache.write_at = spy
    try:
        with torch.no_grad():
            model(torch.randint(61, (1, 4)), caches)
            for t in range(4, 11):
                model(torch.randint(61, (1, 1)), caches, cache_position=torch.tensor([t]))
    finally:
        StaticKVCache.write_at = original
    assert seen == {(1, 4, 12, 8)}


def test_write_at_writes_the_slots_and_returns_the_whole_buffer():
    cache = StaticKVCache(6)
    cache.update(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))  # the prefill: slots 0..2
    k, v = cache.write_at(torch.tensor([4]), torch.full((1, 2, 1, 4), 7.0),
                          torch.full((1, 2, 1, 4), 8.0))
    assert k.shape == (1, 2, 6, 4)
    assert k[:, :, :3].eq(1).all() and k[:, :, 3].eq(0).all() and k[:, :, 4].eq(7).all()
    assert v[:, :, 4].eq(8).all() and k.data_ptr() == cache.key_buffer.data_ptr()


def test_write_at_needs_a_prefilled_buffer():
    with pytest.raises(ValueError, match="call update first"):
        StaticKVCache(4).write_at(torch.tensor([0]), torch.zeros(1, 1, 1, 2), torch.zeros(1, 1, 1, 2))


def test_cache_position_needs_static_caches_and_refuses_alibi():
    model = _gpt()
    token = torch.randint(61, (1, 1))
    with pytest.raises(ValueError, match="StaticKVCache"):
        model(token, model.new_caches(), cache_position=torch.tensor([0]))
    alibi = _gpt(positions="alibi")
    caches = alibi.new_caches(8)
    alibi(torch.randint(61, (1, 3)), caches)
    with pytest.raises(ValueError, match="ALiBi"):
        alibi(token, caches, cache_position=torch.tensor([3]))


def test_multihead_attention_refuses_cache_position_with_a_growing_cache():
    m = mha.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="StaticKVCache"):
        m(torch.randn(1, 1, 8), cache=KVCache(), cache_position=torch.tensor([0]))


def test_fixed_shape_transformer_steps_equal_ordinary_cached_steps():
    torch.manual_seed(0)
    model = Transformer(13, 17, 32, 4, 2, 48).eval()
    src = torch.randint(13, (2, 6))
    src_mask = mha.padding_mask(torch.tensor([6, 4]), 6)
    targets = torch.randint(17, (2, 6))
    with torch.no_grad():
        memory = model.encode(src, src_mask)
        ordinary, fixed = model.new_caches(6), model.new_caches(6)
        first = targets[:, :1]
        model.decode(first, memory, src_mask, caches=ordinary)
        model.decode(first, memory, src_mask, caches=fixed)
        for t in range(1, 6):
            token = targets[:, t:t + 1]
            a = model.decode(token, memory, src_mask, caches=ordinary)
            b = model.decode(token, memory, src_mask, caches=fixed,
                             cache_position=torch.tensor([t]))
            torch.testing.assert_close(b, a, **F32)


@pytest.mark.parametrize("kwargs", [dict(static_cache=False), dict(use_cache=False)])
def test_compile_needs_the_static_cache(kwargs):
    model = _gpt()
    with pytest.raises(ValueError, match="static_cache=True"):
        mha.generate(model, torch.randint(61, (1, 3)), 2, temperature=0, compile=True, **kwargs)
    torch.manual_seed(0)
    transformer = Transformer(13, 17, 16, 2, 1, 32)
    with pytest.raises(ValueError, match="static_cache=True"):
        mha.greedy_decode(transformer, torch.randint(13, (1, 4)), 4, 1, None, compile=True,
                          **kwargs)


@pytest.mark.slow
def test_compiled_generate_gives_the_eager_tokens_without_recompiling_per_step():
    """compile=True: the same greedy tokens as eager, left-padded batch included. A second
    generation whose compiled steps sit at other positions runs under
    ``fail_on_recompile``: the step's shapes do not depend on the position."""
    model = _gpt("llama", seed=1)
    prompt = torch.randint(61, (2, 8))
    attention_mask = torch.tensor([[1] * 8, [0, 0, 0] + [1] * 5])
    eager = mha.generate(model, prompt, 2, temperature=0, static_cache=True,
                         attention_mask=attention_mask)
    compiled = mha.generate(model, prompt, 2, temperature=0, static_cache=True,
                            attention_mask=attention_mask, compile=True)
    assert torch.equal(compiled, eager)
    short = prompt[:, :4]  # the same buffer (4 + 6 = 8 + 2 slots), steps at slots 4..8
    short_mask = torch.ones(2, 4, dtype=torch.long)
    eager = mha.generate(model, short, 6, temperature=0, static_cache=True,
                         attention_mask=short_mask)
    with torch.compiler.set_stance("fail_on_recompile"):
        compiled = mha.generate(model, short, 6, temperature=0, static_cache=True,
                                attention_mask=short_mask, compile=True)
    assert torch.equal(compiled, eager)


@pytest.mark.slow
def test_compiled_greedy_decode_gives_the_eager_tokens():
    torch.manual_seed(0)
    model = Transformer(13, 17, 32, 4, 2, 48).eval()
    src = torch.randint(13, (2, 6))
    src_mask = mha.padding_mask(torch.tensor([6, 4]), 6)
    eager = mha.greedy_decode(model, src, 6, 1, None, src_mask=src_mask, static_cache=True)
    compiled = mha.greedy_decode(model, src, 6, 1, None, src_mask=src_mask, static_cache=True,
                                 compile=True)
    assert torch.equal(compiled, eager)


@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_compiled_generate_on_a_gpu_gives_the_eager_tokens():
    """On CUDA, compile=True records the step as a CUDA graph (mode="reduce-overhead")."""
    model = _gpt("gpt2", seed=2).cuda()
    prompt = torch.randint(61, (3, 6), device="cuda")
    eager = mha.generate(model, prompt, 12, temperature=0, static_cache=True)
    compiled = mha.generate(model, prompt, 12, temperature=0, static_cache=True, compile=True)
    again = mha.generate(model, prompt, 12, temperature=0, static_cache=True, compile=True)
    assert torch.equal(compiled, eager) and torch.equal(again, eager)
