from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_qk_norm_scores(qk_norm_scores, score_bound):
    import math
    import numbers
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, note, randn
    from mha.course.mistakes import hints as catalogued
    q, k = (randn(2, 3, 16, seed=91) * 50, randn(2, 5, 16, seed=92) * 0.1)

    def unit_rms(t):
        return t.double() / torch.sqrt(t.double().pow(2).mean(-1, keepdim=True) + 1e-06)
    raw = unit_rms(q) @ unit_rms(k).transpose(-2, -1)
    hints = catalogued('ex14', 'q6', no_scale=raw, unit_length=raw / 16 / 4.0)
    got = call(qk_norm_scores, 'qk_norm_scores', q=q, k=k)
    check_tensor(got, raw / 4.0, 'qk_norm_scores(q [2, 3, 16] ~ 50 x N(0, 1), k [2, 5, 16] ~ 0.1 x N(0, 1))', hints)
    if not isinstance(score_bound, numbers.Real) or isinstance(score_bound, bool):
        raise CheckFailed('score_bound is None or not a number: it must be your prediction, a number (the grade compares it with the measurement).')
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

@test_case(points=None, hidden=True)
def test_qk_norm_prediction_and_measurement(qk_norm_scores, score_bound):
    import math
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, randn, random_sizes
    for seed in range(2):
        B, L, S, d = random_sizes(5200 + seed, 4, 1, 9)
        q, k = (randn(B, L, d + 1, seed=seed) * 1000, randn(B, S, d + 1, seed=seed + 7))
        unit = lambda t: t.double() / torch.sqrt(t.double().pow(2).mean(-1, keepdim=True) + 1e-05)
        expected = unit(q) @ unit(k).transpose(-2, -1) / math.sqrt(d + 1)
        check_tensor(call(qk_norm_scores, 'qk_norm_scores', q=q, k=k, eps=1e-05), expected, f'qk_norm_scores for q {list(q.shape)}, k {list(k.shape)}, eps 1e-5')
    if not isinstance(score_bound, (int, float)) or abs(score_bound - 4.0) > 0.01:
        raise CheckFailed(f'score_bound = {score_bound!r} disagrees with the measurement. After RMSNorm with weight 1, what is the LENGTH of a vector of d features whose mean square is 1? Then bound a dot product by the lengths.')

