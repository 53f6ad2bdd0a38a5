"""KVCache: what it stores, in which order, and how beam search reorders it.

Attention is invariant to the order of its keys (permuting keys and values together
permutes nothing in the output), so a cache that stored new tokens *before* old ones
would pass every model-level test. Only a direct look at the cache sees it.
"""
import pytest
import torch

from mha import KVCache, MultiHeadAttention, StaticKVCache


def _token(value, B=2, H=3, d=4):
    """Keys of one token ``[B, H, 1, d]`` filled with ``value``: recognisable by eye."""
    return torch.full((B, H, 1, d), float(value))


def test_cache_keeps_old_tokens_before_new_ones():
    cache = KVCache()
    cache.update(_token(1), _token(10))
    k, v = cache.update(_token(2), _token(20))
    assert k[0, 0, :, 0].tolist() == [1.0, 2.0]
    assert v[0, 0, :, 0].tolist() == [10.0, 20.0]


def test_cache_stores_each_token_once():
    cache = KVCache()
    for t in range(5):
        k, v = cache.update(_token(t), _token(-t))
    assert len(cache) == 5
    assert k.shape == v.shape == (2, 3, 5, 4)
    assert k[1, 2, :, 3].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_cache_appends_a_prompt_then_single_tokens_across_buffer_growth():
    cache = KVCache()
    pieces = []
    for n in [3, 1, 1, 20, 1, 40, 2]:  # crosses the initial capacity more than once
        k, v = torch.randn(2, 3, n, 4), torch.randn(2, 3, n, 4)
        pieces.append((k, v))
        got_k, got_v = cache.update(k, v)
        assert torch.equal(got_k, torch.cat([p[0] for p in pieces], dim=-2))
        assert torch.equal(got_v, torch.cat([p[1] for p in pieces], dim=-2))
        assert len(cache) == got_k.shape[-2]
    assert torch.equal(cache.key, got_k) and torch.equal(cache.value, got_v)


def test_static_cache_keeps_the_first_keys_and_values():
    cache = KVCache(static=True)
    assert not cache.filled and cache.key is None and len(cache) == 0
    k, v = torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    cache.update(k, v)
    assert cache.filled and len(cache) == 6
    assert torch.equal(cache.key, k) and torch.equal(cache.value, v)


def test_static_cache_projects_the_memory_once_and_reuses_it():
    m = MultiHeadAttention(8, 2).eval()
    cache = KVCache(static=True)
    memory = torch.randn(2, 6, 8)
    x1, x2 = torch.randn(2, 1, 8), torch.randn(2, 1, 8)
    with torch.no_grad():
        first, _ = m(x1, memory, cache=cache)
        assert cache.key.shape == (2, 2, 6, 4)
        # the second step's memory argument is ignored: the cached projection is used
        second, _ = m(x2, torch.zeros(2, 6, 8), cache=cache)
        torch.testing.assert_close(first, m(x1, memory)[0])
        torch.testing.assert_close(second, m(x2, memory)[0])


def test_reorder_selects_and_repeats_batch_rows():
    cache = KVCache()
    rows = torch.arange(3.0)[:, None, None, None]  # row b holds the value b
    cache.update(rows.expand(3, 2, 4, 5), -rows.expand(3, 2, 4, 5))
    cache.reorder(torch.tensor([2, 2, 0]))
    assert cache.key.shape == (3, 2, 4, 5) and len(cache) == 4
    assert cache.key[:, 0, 0, 0].tolist() == [2.0, 2.0, 0.0]
    assert cache.value[:, 0, 0, 0].tolist() == [-2.0, -2.0, -0.0]


def test_reordered_rows_grow_independently():
    cache = KVCache()
    cache.update(torch.zeros(2, 1, 1, 1), torch.zeros(2, 1, 1, 1))
    cache.reorder(torch.tensor([0, 0]))  # two beams continue hypothesis 0
    k, _ = cache.update(torch.tensor([1.0, 2.0]).view(2, 1, 1, 1), torch.zeros(2, 1, 1, 1))
    assert k[:, 0, :, 0].tolist() == [[0.0, 1.0], [0.0, 2.0]]


def test_reorder_of_a_static_cache_and_of_an_empty_one():
    empty = KVCache()
    empty.reorder(torch.tensor([1, 0]))  # nothing cached yet: nothing to do
    assert len(empty) == 0
    static = KVCache(static=True)
    static.update(torch.arange(2.0).view(2, 1, 1, 1), torch.zeros(2, 1, 1, 1))
    static.reorder(torch.tensor([1, 1, 0]))
    assert static.key.flatten().tolist() == [1.0, 1.0, 0.0]


def test_reorder_rejects_rows_outside_the_batch():
    cache = KVCache()
    cache.update(torch.zeros(2, 1, 1, 1), torch.zeros(2, 1, 1, 1))
    with pytest.raises(ValueError, match=r"rows in 0..1; got \[0, 2\]"):
        cache.reorder(torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="1-D integer tensor"):
        cache.reorder(torch.tensor([0.0, 1.0]))


@pytest.mark.parametrize("kv", [8, 2, 1], ids=["mha", "gqa", "mqa"])
def test_gqa_cache_is_smaller_by_the_group_factor(kv):
    m = MultiHeadAttention(64, 8, num_kv_heads=kv).eval()
    cache = KVCache()
    with torch.no_grad():
        for _ in range(5):
            m(torch.randn(3, 1, 64), cache=cache)
    # [B, H_kv, S, head_dim]: 8 / kv times fewer numbers than ordinary multi-head attention
    assert cache.key.shape == cache.value.shape == (3, kv, 5, 8)


# ------------------------------------------------------------------ StaticKVCache


def test_static_kv_cache_holds_what_torch_cat_would_and_never_moves_its_buffer():
    cache = StaticKVCache(max_len=70)
    pieces = []
    for n in [3, 1, 1, 20, 1, 40, 2]:  # a prompt, single tokens, long chunks: 68 in all
        k, v = torch.randn(2, 3, n, 4), torch.randn(2, 3, n, 5)  # d_v may differ from d_k
        pieces.append((k, v))
        got_k, got_v = cache.update(k, v)
        if len(pieces) == 1:
            buffer = cache.key_buffer.data_ptr()  # allocated once, on the first update
        assert cache.key_buffer.data_ptr() == buffer  # ...and written in place afterwards
        assert cache.key_buffer.shape == (2, 3, 70, 4)
        assert torch.equal(got_k, torch.cat([p[0] for p in pieces], dim=-2))
        assert torch.equal(got_v, torch.cat([p[1] for p in pieces], dim=-2))
        assert len(cache) == got_k.shape[-2]


def test_static_kv_cache_takes_the_device_and_dtype_of_its_keys():
    cache = StaticKVCache(8)
    keys = torch.ones(1, 2, 3, 4, dtype=torch.float64)
    cache.update(keys, keys)
    assert cache.key_buffer.dtype == keys.dtype and cache.key_buffer.device == keys.device


def test_static_kv_cache_refuses_to_write_past_max_len():
    cache = StaticKVCache(4)
    cache.update(torch.zeros(1, 1, 3, 2), torch.zeros(1, 1, 3, 2))
    with pytest.raises(ValueError, match="holds max_len=4 positions; writing 2 more after 3"):
        cache.update(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2))


def test_static_kv_cache_reorders_rows_in_place_like_the_growing_one():
    growing, static = KVCache(), StaticKVCache(10)
    for cache in (growing, static):
        cache.update(torch.arange(3.0).view(3, 1, 1, 1), torch.zeros(3, 1, 1, 1))
        cache.reorder(torch.tensor([2, 2, 0]))
    assert static.key.flatten().tolist() == growing.key.flatten().tolist() == [2.0, 2.0, 0.0]
    with pytest.raises(ValueError, match="keeps its batch size"):
        static.reorder(torch.tensor([0, 1]))


def test_static_kv_cache_reorder_moves_each_rows_values_with_its_keys():
    # beam search: a beam that continues hypothesis 2 needs hypothesis 2's keys *and* values
    keys, values = torch.randn(3, 2, 4, 5), torch.randn(3, 2, 4, 5)
    cache = StaticKVCache(10)
    cache.update(keys, values)
    index = torch.tensor([2, 2, 0])
    cache.reorder(index)
    assert torch.equal(cache.key, keys[index])
    assert torch.equal(cache.value, values[index])


@pytest.mark.parametrize("max_len", [0, 2.5])
def test_static_kv_cache_needs_a_positive_integer_length(max_len):
    with pytest.raises(ValueError, match="max_len must be a positive integer"):
        StaticKVCache(max_len)
