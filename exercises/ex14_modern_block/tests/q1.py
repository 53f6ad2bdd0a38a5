from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rms_norm(rms_norm):
    import torch
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.references import rms_norm as reference_rms
    forbid(rms_norm, 'rms_norm', {'RMSNorm': 'compute the root mean square yourself.', 'rms_norm': 'compute the root mean square yourself.', 'layer_norm': 'RMSNorm is not LayerNorm.'})
    weight = randn(8, seed=72)
    for x, what in [(randn(2, 5, 8, seed=71) * 3 + 1, 'x [2, 5, 8] (mean ~1)'), (randn(2, 5, 8, seed=70) * 0.001, 'x [2, 5, 8] with tiny entries (~0.001, where eps matters)')]:
        expected = reference_rms(x, weight)
        centred = x - x.mean(-1, keepdim=True)
        hints = [(centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + 1e-06) * weight, 'RMSNorm does not subtract the mean: divide x itself by its root mean square.'), (x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + 1e-06) * weight, 'the MEAN of the squares over the D features, not their sum.'), (x / (torch.sqrt(x.pow(2).mean(-1, keepdim=True)) + 1e-06) * weight, 'eps goes inside the square root, added to the mean of the squares.')]
        got = call(rms_norm, 'rms_norm', x=x, weight=weight)
        check_tensor(got, expected, f'rms_norm({what}, weight [8])', hints)

