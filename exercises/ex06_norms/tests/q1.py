from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_layer_norm(layer_norm):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, forbid, randn
    forbid(layer_norm, 'layer_norm', {'F.layer_norm': 'compute the mean and the variance yourself.', 'functional.layer_norm': 'compute the mean and the variance yourself.', 'torch.layer_norm': 'compute the mean and the variance yourself.', 'LayerNorm': 'compute the mean and the variance yourself.'})
    x = randn(2, 6, 8, seed=31) * 3 + 1
    weight, bias = (randn(8, seed=32), randn(8, seed=33))
    expected = F.layer_norm(x, (8,), weight, bias, 1e-05)
    m, v = (x.mean(-1, keepdim=True), x.var(-1, keepdim=True))
    m0, v0 = (x.mean(0, keepdim=True), x.var(0, keepdim=True, unbiased=False))
    hints = [((x - m) / torch.sqrt(v + 1e-05) * weight + bias, "LayerNorm uses the biased variance, divided by D; torch's default variance divides by D - 1."), ((x - m0) / torch.sqrt(v0 + 1e-05) * weight + bias, 'LayerNorm takes its statistics over the features of each token, the last axis, not over the batch.')]
    got = call(layer_norm, 'layer_norm', x=x, weight=weight, bias=bias)
    check_tensor(got, expected, 'layer_norm(x, weight, bias) for x [2, 6, 8]', hints)

