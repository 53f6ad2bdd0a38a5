from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 4
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_grouped_attention(grouped_attention):
    import math
    import torch
    import torch.nn.functional as F
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import classic_attention, hints as catalogued
    copies = 'each key/value head must serve its whole group without being copied.'
    forbid(grouped_attention, 'grouped_attention', {'repeat_kv': copies, 'repeat_interleave': copies, 'repeat': copies, 'expand': copies, 'expand_as': copies, 'tile': copies, 'broadcast_to': copies, 'scaled_dot_product_attention': 'compute the attention yourself.'})

    def close(expected):
        return lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and torch.allclose(got.double(), expected.double(), atol=1e-05)
    B, H_kv, group, L, S, d = (2, 2, 3, 3, 5, 4)
    q, k, v = (randn(B, H_kv * group, L, d, seed=81), randn(B, H_kv, S, d, seed=82), randn(B, H_kv, S, 3, seed=83))
    expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    classic = classic_attention(q, mha.repeat_kv(k, group), mha.repeat_kv(v, group))
    tiled = classic_attention(q, k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1))['reference'][0]
    scores = q @ mha.repeat_kv(k, group).transpose(-2, -1) / math.sqrt(d)
    exps = (scores - scores.amax()).exp()
    grouped = exps.unflatten(1, (H_kv, group))
    per_group = (grouped / grouped.sum(dim=(2, 3), keepdim=True)).flatten(1, 2)
    over_queries = [classic['softmax_axis'][0], per_group @ mha.repeat_kv(v, group)]
    hints = catalogued('ex08', 'q4', no_scale=classic['no_scale'][0], softmax_axis=lambda got: any((close(c)(got) for c in over_queries)), tiled_groups=tiled)
    got = call(grouped_attention, 'grouped_attention', q=q, k=k, v=v)
    check_tensor(got, expected, 'grouped_attention for q [2, 6, 3, 4], k [2, 2, 5, 4], v [2, 2, 5, 3] (groups of 3)', hints)

@test_case(points=None, hidden=True)
def test_grouped_attention_random(grouped_attention):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, L, S, d, H_kv, group = random_sizes(8400 + seed, 6, 1, 5)
        H_kv, group = (H_kv + (seed > 0), group + (seed > 0))
        q = randn(B, H_kv * group, L, d, seed=seed)
        k, v = (randn(B, H_kv, S, d, seed=seed + 10), randn(B, H_kv, S, d + 1, seed=seed + 20))
        expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        check_tensor(call(grouped_attention, 'grouped_attention', q=q, k=k, v=v), expected, f'grouped_attention for {H_kv * group} query heads, {H_kv} key/value heads, L = {L}, S = {S}, d = {d}')

