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
    scores = randn(3, 5, seed=3) * 2
    hints = [(torch.softmax(scores, dim=0), 'your columns sum to 1, not your rows: normalise over the last axis (dim=-1), the keys.'), (torch.exp(scores), 'the exponentials are not divided by their row sum.')]
    check_tensor(call(softmax, 'softmax', scores=scores), torch.softmax(scores, dim=-1), 'softmax(scores) for scores [3, 5]', hints)
    big = torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    hints = [(lambda w: bool(torch.isnan(w).any()), "exp(1000) overflows to inf and inf / inf = nan: subtract each row's maximum before torch.exp.")]
    check_tensor(call(softmax, 'softmax', scores=big), torch.softmax(big, dim=-1), 'softmax(scores) for large scores (+-1000)', hints)
    blocked = torch.tensor([[0.0, float('-inf'), 1.0, float('-inf')]])
    check_tensor(call(softmax, 'softmax', scores=blocked), torch.softmax(blocked, dim=-1), 'softmax(scores) with -inf entries (blocked keys)')

