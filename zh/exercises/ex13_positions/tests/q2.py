from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rope_attend_step(rope_attend_step, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, check_tuple, forbid, randn, reference
    from mha.course.mistakes import classic_attention, hints as catalogued
    forbid(rope_attend_step, 'rope_attend_step', {'scaled_dot_product_attention': 'compute the attention yourself.', 'apply_rope': 'use your rope.', 'KVCache': 'grow the cache yourself.'})
    q, k, v = (randn(2, 2, 5, 8, seed=51), randn(2, 2, 5, 8, seed=52), randn(2, 2, 5, 8, seed=53))
    positions = torch.arange(5)
    full, _ = mha.scaled_dot_product_attention(mha.apply_rope(q, positions), mha.apply_rope(k, positions), v, mha.causal_mask(5))
    at_zero, _ = mha.scaled_dot_product_attention(mha.apply_rope(q, torch.zeros(5, dtype=torch.long)), mha.apply_rope(k, torch.zeros(5, dtype=torch.long)), v, mha.causal_mask(5))
    cache_k = cache_v = None
    with reference(env, rope=mha.apply_rope):
        for t in range(5):
            result = call(rope_attend_step, 'rope_attend_step', q_new=q[:, :, t:t + 1], k_new=k[:, :, t:t + 1], v_new=v[:, :, t:t + 1], cache_k=cache_k, cache_v=cache_v)
            out, cache_k, cache_v = check_tuple(result, f'rope_attend_step at step {t + 1}', ('out', 'cache_k', 'cache_v'))
            hints = [(k[:, :, :t + 1], 'cache_k holds the keys as if every token were at position 0 (unrotated): rotate each new key at ITS position, t = the number of cached tokens, before appending it.')]
            check_tensor(cache_k, mha.apply_rope(k[:, :, :t + 1], positions[:t + 1]), f'cache_k after step {t + 1}', hints)
            classic = classic_attention(mha.apply_rope(q[:, :, t:t + 1], positions[t:t + 1]), mha.apply_rope(k[:, :, :t + 1], positions[:t + 1]), v[:, :, :t + 1])
            hints = catalogued('ex13', 'q2', no_scale=classic['no_scale'][0], softmax_axis=classic['softmax_axis'][0])
            hints += [(at_zero[:, :, t:t + 1], 'every new token was rotated as if at position 0: with a cache of t tokens, the new one sits at position t (the cache length).')]
            check_tensor(out, full[:, :, t:t + 1], f'the output of step {t + 1} (= row {t} of causal attention with RoPE)', hints)

