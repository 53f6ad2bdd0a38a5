from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_masked_batch_norm(masked_batch_norm_train):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, forbid, randn
    forbid(masked_batch_norm_train, 'masked_batch_norm_train', {'F.batch_norm': 'compute the statistics yourself.', 'functional.batch_norm': 'compute the statistics yourself.', 'torch.batch_norm': 'compute the statistics yourself.', 'BatchNorm1d': 'compute the statistics yourself.', 'mha.BatchNorm': 'compute the statistics yourself.'})
    x = randn(2, 5, 8, seed=70) * 2 + 1
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    x[~mask] = 50.0
    weight, bias = (randn(8, seed=71), randn(8, seed=72))
    expected = torch.zeros_like(x)
    expected[mask] = F.batch_norm(x[mask], None, None, weight, bias, training=True, eps=1e-05)
    everything = F.batch_norm(x.reshape(-1, 8), None, None, weight, bias, training=True, eps=1e-05).view(2, 5, 8)
    real = x[mask]
    unbiased = torch.zeros_like(x)
    unbiased[mask] = (real - real.mean(0)) / torch.sqrt(real.var(0) + 1e-05) * weight + bias
    hints = [(everything, 'the padding is in your statistics: average over the real tokens only (mask), and set the padding outputs to 0.'), (everything * mask[..., None], 'the padding is in your statistics: average over the real tokens only.'), (lambda y: bool(torch.allclose(y[mask], expected[mask], atol=0.0001)), 'the real tokens are right: the output at the padding positions must be exactly 0.'), (unbiased, 'use the biased variance (divide by the number of real tokens).')]
    got = call(masked_batch_norm_train, 'masked_batch_norm_train', x=x, mask=mask, weight=weight, bias=bias)
    check_tensor(got, expected, 'masked_batch_norm_train(x [2, 5, 8], mask with lengths [5, 2], ...)', hints)

