from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_attention_entropy(attention_entropy):
    import math
    import torch
    from mha.course.checks import call, check_tensor, randn
    weights = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0]]])
    expected = torch.tensor([[0.0, math.log(4), math.log(2)]])
    plogp = weights * torch.log(weights)
    hints = [(lambda h: bool(torch.isnan(h).any()), '0 * log(0) is nan in floating point: count it as 0 (torch.special.xlogy(p, p), or torch.where(p > 0, p * p.log(), 0)).'), (-expected, 'entropy is -sum p log p, which is >= 0: you forgot the minus sign.'), (lambda h: list(h.shape) == [1, 4], 'sum over the keys, the last axis: one entropy per query row.')]
    got = call(attention_entropy, 'attention_entropy', weights=weights)
    check_tensor(got, expected, 'attention_entropy for rows [1, 0, 0, 0], uniform, [0.5, 0.5, 0, 0]', hints)
    weights = torch.softmax(randn(2, 3, 4, 5, seed=61), dim=-1)
    check_tensor(call(attention_entropy, 'attention_entropy', weights=weights), -(weights * weights.log()).sum(-1), 'attention_entropy for weights [2, 3, 4, 5]')

