from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_attend_with_cache(attend_with_cache):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, check_tuple, forbid, randn
    from mha.course.mistakes import classic_attention, hints as catalogued
    forbid(attend_with_cache, 'attend_with_cache', {'scaled_dot_product_attention': 'compute the scores, the softmax and weights @ v yourself.', 'MultiheadAttention': 'compute the attention yourself.', 'mha.KVCache': 'grow the cache yourself with torch.cat.'})
    q, k, v = (randn(2, 2, 5, 4, seed=51), randn(2, 2, 5, 4, seed=52), randn(2, 2, 5, 4, seed=53))
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    cache_k = cache_v = None
    errors = [('size', 'append along the sequence axis: [B, H, t, d] -> [B, H, t + 1, d].')]
    for t in range(5):
        result = call(attend_with_cache, 'attend_with_cache', q_new=q[:, :, t:t + 1], k_new=k[:, :, t:t + 1], v_new=v[:, :, t:t + 1], cache_k=cache_k, cache_v=cache_v, error_hints=errors)
        out, cache_k, cache_v = check_tuple(result, f'attend_with_cache at step {t + 1}', ('out', 'cache_k', 'cache_v'))
        check_tensor(cache_k, k[:, :, :t + 1], f'cache_k after step {t + 1}', [(lambda c: c.shape[-1] != 4, 'append along the sequence axis, not the feature axis.')])
        check_tensor(cache_v, v[:, :, :t + 1], f'cache_v after step {t + 1}')
        classic = classic_attention(q[:, :, t:t + 1], k[:, :, :t + 1], v[:, :, :t + 1])
        hints = [(v[:, :, t:t + 1], 'the new query must attend to every cached key, not only to the new one.')]
        hints += catalogued('ex07', 'q4', no_scale=classic['no_scale'][0], softmax_axis=classic['softmax_axis'][0])
        check_tensor(out, full[:, :, t:t + 1], f'the output of step {t + 1} (= row {t} of causal attention)', hints)

