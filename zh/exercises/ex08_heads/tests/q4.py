from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_kv_cache_bytes(kv_cache_bytes):
    import torch
    from mha.course.checks import call, check_equal

    def measured(layers, kv_heads, d, S, B, dtype):
        """The reference: allocate the cache and count its bytes."""
        cache = [(torch.zeros(B, kv_heads, S, d, dtype=dtype), torch.zeros(B, kv_heads, S, d, dtype=dtype)) for _ in range(layers)]
        return sum((t.numel() * t.element_size() for pair in cache for t in pair))
    for args in [(2, 4, 8, 10, 3, torch.float32), (3, 2, 16, 7, 1, torch.float16)]:
        expected = measured(*args)
        layers, kv_heads, d, S, B, dtype = args
        numbers = layers * kv_heads * d * S * B
        hints = [(expected // 2, 'the cache holds the keys AND the values: two tensors [B, H_kv, S, d] per layer.'), (expected * 8, 'bytes, not bits: a float32 takes 4 bytes, a float16 2.'), (lambda n: n == 2 * numbers or n == numbers, 'multiply by the number of bytes of one number in dtype: 4 for float32, 2 for float16.')]
        got = call(kv_cache_bytes, 'kv_cache_bytes', num_layers=layers, num_kv_heads=kv_heads, head_dim=d, seq_len=S, batch=B, dtype=dtype)
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = int(got)
        check_equal(got, expected, f'kv_cache_bytes({layers} layers, {kv_heads} key/value heads, head_dim {d}, seq_len {S}, batch {B}, {dtype})', hints)

