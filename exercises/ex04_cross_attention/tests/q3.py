from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_alignment(alignment):
    import torch
    from mha.course.checks import call, check_tensor, randn
    weights = torch.softmax(randn(2, 3, 6, 7, seed=13) * 3, dim=-1)
    hints = [(lambda a: list(a.shape) == [2, 3, 7], 'one answer per query: take the argmax over the keys, the last axis.'), (weights.argmin(dim=-1), 'the largest weight: argmax, not argmin.')]
    got = call(alignment, 'alignment', weights=weights)
    check_tensor(got, weights.argmax(dim=-1), 'alignment(weights) for weights [2, 3, 6, 7]', hints)

