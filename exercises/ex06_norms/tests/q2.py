from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_batch_norm_train(batch_norm_train):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, forbid, randn
    forbid(batch_norm_train, 'batch_norm_train', {'F.batch_norm': 'compute the statistics yourself.', 'functional.batch_norm': 'compute the statistics yourself.', 'torch.batch_norm': 'compute the statistics yourself.', 'BatchNorm1d': 'compute the statistics yourself.', 'mha.BatchNorm': 'compute the statistics yourself.'})
    x = randn(2, 6, 8, seed=34) * 3 + 1
    weight, bias = (randn(8, seed=35), randn(8, seed=36))
    expected = F.batch_norm(x.reshape(-1, 8), None, None, weight, bias, training=True, eps=1e-05).view(2, 6, 8)
    m0, v0 = (x.mean(0), x.var(0, unbiased=False))
    m, v = (x.mean((0, 1)), x.var((0, 1)))
    ml, vl = (x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False))
    hints = [((x - m0) / torch.sqrt(v0 + 1e-05) * weight + bias, 'take the statistics over every token of the batch: all axes but the last (dims 0 and 1 here), not only the batch axis.'), ((x - m) / torch.sqrt(v + 1e-05) * weight + bias, 'use the biased variance (unbiased=False).'), ((x - ml) / torch.sqrt(vl + 1e-05) * weight + bias, "that is LayerNorm (statistics per token); BatchNorm's are per feature, over the batch.")]
    got = call(batch_norm_train, 'batch_norm_train', x=x, weight=weight, bias=bias)
    check_tensor(got, expected, 'batch_norm_train(x, weight, bias) for x [2, 6, 8]', hints)

