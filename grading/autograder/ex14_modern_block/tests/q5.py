from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rms_norm_half(rms_norm_half):
    import torch
    from mha.course.checks import call, check_equal, check_tensor, forbid, randn
    from mha.course.mistakes import hints as catalogued
    stay = 'every tensor must stay float16: no conversion.'
    own = 'compute the root mean square yourself.'
    forbid(rms_norm_half, 'rms_norm_half', {'float': stay, 'double': stay, 'to': stay, 'type': stay, 'float32': stay, 'float64': stay, 'norm': own, 'vector_norm': own, 'F.rms_norm': own, 'functional.rms_norm': own, 'RMSNorm': own, 'layer_norm': own})
    x = torch.cat([randn(2, 16, seed=88) * 3000, randn(1, 16, seed=89) * 0.001, torch.zeros(1, 16)]).half()
    weight = randn(16, seed=90).half()

    def rms(t, eps):
        return t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + eps) * weight
    expected = rms(x.double(), 1e-06).half()
    close = lambda a, b: bool(torch.allclose(a.double(), b.double(), atol=0.02, rtol=0.01))
    large_right_tiny_wrong = lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and close(got[[0, 1, 3]], expected[[0, 1, 3]]) and (not close(got[2], expected[2]))
    hints = catalogued('ex14', 'q5', overflow=rms(x, 1e-06), eps_unscaled=large_right_tiny_wrong)
    got = call(rms_norm_half, 'rms_norm_half', x=x, weight=weight)
    check_tensor(got, expected, 'rms_norm_half(float16 x [4, 16]: two rows ~3000, one row ~0.001, one row of zeros)', hints, atol=0.02, rtol=0.01)
    check_equal(str(got.dtype), 'torch.float16', "the dtype of rms_norm_half's result")

@test_case(points=None, hidden=True)
def test_rms_norm_half_random(rms_norm_half):
    import torch
    from mha.course.checks import call, check_equal, check_tensor, randn, random_sizes
    for seed, scale in enumerate([20000.0, 1.0, 0.003]):
        B, L, D = random_sizes(5100 + seed, 3, 1, 9)
        x = (randn(B, L, D + 3, seed=seed) * scale).clamp(-60000, 60000).half()
        weight = randn(D + 3, seed=seed + 5).half()
        expected = (x.double() / torch.sqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-05) * weight.double()).half()
        got = call(rms_norm_half, 'rms_norm_half', x=x, weight=weight, eps=1e-05)
        check_tensor(got, expected, f'rms_norm_half for float16 x {list(x.shape)} with entries ~ {scale:g} x N(0, 1), eps 1e-5', atol=0.02, rtol=0.01)
        check_equal(str(got.dtype), 'torch.float16', "the dtype of rms_norm_half's result")

