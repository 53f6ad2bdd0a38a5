from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_sink_attention(sink_attention):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_tensor, check_tuple, forbid, randn
    from mha.course.mistakes import hints as catalogued
    forbid(sink_attention, 'sink_attention', {'attention_with_sinks': 'find and fix the mistake yourself.', 'SinkAttention': 'find and fix the mistake yourself.'})
    q, k, v = (randn(2, 3, 5, 4, seed=173), randn(2, 3, 7, 4, seed=174), randn(2, 3, 7, 4, seed=175))
    sinks, mask = (torch.tensor([0.0, 1.5, -1.0]), mha.sliding_window_mask(5, 3, 7))
    out, weights = mha.attention_with_sinks(q, k, v, sinks, mask)
    first_value = weights.new_ones(1) - weights.sum(-1, keepdim=True)
    scaled_weights = mha.attention_with_sinks(q, k, v, sinks / math.sqrt(4), mask)
    got = check_tuple(call(sink_attention, 'sink_attention', q=q, k=k, v=v, sinks=sinks, mask=mask), 'sink_attention', ('out', 'weights'))
    check_tensor(got[1], weights, 'the weights of sink_attention for q [2, 3, 5, 4], k [2, 3, 7, 4], a window of 3', catalogued('ex17', 'q3', sink_scaled=scaled_weights[1]))
    check_tensor(got[0], out, 'the output of sink_attention for q [2, 3, 5, 4], k [2, 3, 7, 4], a window of 3', catalogued('ex17', 'q3', sink_given_value=out + first_value * v[..., :1, :], sink_scaled=scaled_weights[0]))

@test_case(points=None, hidden=True)
def test_sink_attention_random(sink_attention):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, check_tuple, randn, random_sizes
    for seed in range(3):
        B, H, L, d = random_sizes(1730 + seed, 4, 1, 6)
        S = L + seed
        q, k, v = (randn(B, H, L, d, seed=seed), randn(B, H, S, d, seed=seed + 10), randn(B, H, S, d + 1, seed=seed + 20))
        sinks, mask = (2 * randn(H, seed=seed + 30), mha.sliding_window_mask(L, 2 + seed, S))
        out, weights = mha.attention_with_sinks(q, k, v, sinks, mask)
        got = check_tuple(call(sink_attention, 'sink_attention', q=q, k=k, v=v, sinks=sinks, mask=mask), 'sink_attention', ('out', 'weights'))
        check_tensor(got[1], weights, f'the weights for q {list(q.shape)}, S = {S}')
        check_tensor(got[0], out, f'the output for q {list(q.shape)}, S = {S}')

