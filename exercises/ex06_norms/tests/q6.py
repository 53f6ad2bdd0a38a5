from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_group_norm(group_norm):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_raises, check_tensor, forbid, randn
    from mha.course.mistakes import hints
    forbid(group_norm, 'group_norm', {'group_norm': 'compute the statistics of each group yourself.', 'GroupNorm': 'compute the statistics of each group yourself.', 'layer_norm': 'compute the statistics of each group yourself.', 'LayerNorm': 'compute the statistics of each group yourself.'})
    x = randn(2, 3, 12, seed=90) * 3 + torch.arange(12.0)
    weight, bias = (randn(12, seed=91), randn(12, seed=92))
    expected = F.group_norm(x.reshape(-1, 12), 3, weight, bias, 1e-05).view(2, 3, 12)
    strided = x.view(2, 3, 4, 3).transpose(-2, -1)
    interleaved = ((strided - strided.mean(-1, keepdim=True)) / (strided.var(-1, keepdim=True, unbiased=False) + 1e-05).sqrt()).transpose(-2, -1).reshape(2, 3, 12) * weight + bias
    g = x.view(2, 3, 3, 4)
    unbiased = ((g - g.mean(-1, keepdim=True)) / (g.var(-1, keepdim=True) + 1e-05).sqrt()).view(2, 3, 12) * weight + bias
    across = ((g - g.mean(-2, keepdim=True)) / (g.var(-2, keepdim=True, unbiased=False) + 1e-05).sqrt()).view(2, 3, 12) * weight + bias
    found = hints('ex06', 'q6', interleaved=interleaved, unbiased=unbiased, across_groups=across)
    check_tensor(call(group_norm, 'group_norm', x=x, groups=3, weight=weight, bias=bias), expected, 'group_norm(x [2, 3, 12], groups=3, weight, bias)', found)
    check_tensor(call(group_norm, 'group_norm', x=x, groups=1, weight=weight, bias=bias), F.layer_norm(x, (12,), weight, bias, 1e-05), 'group_norm(x [2, 3, 12], groups=1, ...), which is LayerNorm')
    check_raises(group_norm, 'group_norm', ValueError, x=x, groups=5, weight=weight, bias=bias, why='12 features cannot be cut into 5 equal groups')

