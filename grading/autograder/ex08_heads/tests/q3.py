from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_repeat_kv(repeat_kv):
    import torch
    from mha.course.checks import call, check_tensor, randn
    k = randn(2, 2, 5, 3, seed=63)
    expected = torch.stack([k[:, 0], k[:, 0], k[:, 0], k[:, 1], k[:, 1], k[:, 1]], dim=1)
    hints = [(k.repeat(1, 3, 1, 1), 'neighbouring query heads share a key/value head ([k0, k0, k0, k1, k1, k1]); k.repeat tiles the heads ([k0, k1, k0, k1, ...]): use repeat_interleave along dim 1.')]
    got = call(repeat_kv, 'repeat_kv', k=k, group=3)
    check_tensor(got, expected, 'repeat_kv(k, 3) for k [2, 2, 5, 3]', hints)

@test_case(points=None, hidden=True)
def test_repeat_kv_random(repeat_kv):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, S, d, group = random_sizes(2900 + seed, 4, 1, 5)
        H_kv, group = (2 + seed, group + 1)
        q = randn(B, H_kv * group, S + 1, d, seed=7 + seed)
        k, v = (randn(B, H_kv, S, d, seed=8 + seed), randn(B, H_kv, S, d, seed=9 + seed))
        expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        got_k, got_v = (call(repeat_kv, 'repeat_kv', k=k, group=group), call(repeat_kv, 'repeat_kv', k=v, group=group))
        check_tensor(got_k, k.repeat_interleave(group, dim=1), f'repeat_kv(k, {group}) for k {list(k.shape)}')
        check_tensor(F.scaled_dot_product_attention(q, got_k, got_v), expected, f'attention with your repeated keys/values ({H_kv} key/value heads, groups of {group}) against F.scaled_dot_product_attention(enable_gqa=True)')

