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

