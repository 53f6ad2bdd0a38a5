from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_softmax(softmax):
    import torch
    from mha.course.checks import call, check_tensor, forbid, randn
    forbid(softmax, 'softmax', {'softmax': 'write it with torch.exp, amax and sum; torch.softmax, F.softmax and x.softmax do the whole job.', 'Softmax': 'write it with torch.exp, amax and sum.'})
    from mha.course.mistakes import hints
    scores = randn(3, 5, seed=3) * 2
    columns_sum_to_1 = lambda w: bool(torch.allclose(w.sum(dim=0), torch.ones(w.shape[1]), atol=0.0001))
    right_but_for_the_sum = lambda w: bool(torch.allclose(w / w.sum(dim=-1, keepdim=True), torch.softmax(scores, dim=-1), atol=0.0001))
    found = hints('ex01', 'q2', softmax_axis=columns_sum_to_1, not_normalised=right_but_for_the_sum)
    check_tensor(call(softmax, 'softmax', scores=scores), torch.softmax(scores, dim=-1), 'softmax(scores) for scores [3, 5]', found)
    big = torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    found = hints('ex01', 'q2', overflow=lambda w: bool(torch.isnan(w).any()))
    check_tensor(call(softmax, 'softmax', scores=big), torch.softmax(big, dim=-1), 'softmax(scores) for large scores (+-1000)', found)
    far = torch.tensor([[0.0, 1.0, 2.0], [-1000.0, -1001.0, -1002.0]])
    found = hints('ex01', 'q2', global_max=lambda w: bool(torch.isnan(w).any()))
    check_tensor(call(softmax, 'softmax', scores=far), torch.softmax(far, dim=-1), 'softmax(scores) for a row of scores all near -1000 below a row near 0', found)
    blocked = torch.tensor([[0.0, float('-inf'), 1.0, float('-inf')]])
    check_tensor(call(softmax, 'softmax', scores=blocked), torch.softmax(blocked, dim=-1), 'softmax(scores) with -inf entries (blocked keys)')

