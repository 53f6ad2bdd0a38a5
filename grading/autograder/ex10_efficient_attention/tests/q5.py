from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_count_max_raises(count_max_raises, prediction):
    import numbers
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, note
    rows = torch.tensor([[0.0, 1, 2, 3, 4, 5, 6, 7], [7.0, 6, 5, 4, 3, 2, 1, 0], [1.0, 5, 2, 3, 9, 0, 4, 8]])
    pieces = [rows[:, s:s + 2] for s in range(0, 8, 2)]
    got = call(count_max_raises, 'count_max_raises', score_blocks=iter(pieces))
    check_tensor(got, torch.tensor([3, 0, 1]), 'count_max_raises for 4 blocks of 2 of rows [0..7], [7..0], [1, 5, 2, 3, 9, 0, 4, 8]', [(torch.tensor([4, 1, 2]), 'count only the blocks AFTER the first: the first block sets the maximum, it does not raise it.')])
    if not isinstance(prediction, numbers.Real) or isinstance(prediction, bool):
        raise CheckFailed('prediction is None or not a number: it must be your prediction, a number (the grade compares it with the measurement).')
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

@test_case(points=None, hidden=True)
def test_prediction_and_measurement(count_max_raises, prediction):
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, randn, random_sizes
    for seed in range(2):
        N, n, b = random_sizes(3700 + seed, 3, 2, 9)
        scores = randn(N, n * b, seed=seed)
        pieces = [scores[:, s:s + b] for s in range(0, n * b, b)]
        maxima = torch.stack([p.amax(-1) for p in pieces], dim=-1)
        expected = (maxima[:, 1:] > maxima.cummax(-1).values[:, :-1]).sum(-1)
        check_tensor(call(count_max_raises, 'count_max_raises', score_blocks=iter(pieces)), expected, f'count_max_raises for {N} rows of {n} blocks of {b}')
    expected_mean = sum((1 / j for j in range(2, 65)))
    if not isinstance(prediction, (int, float)) or abs(prediction - expected_mean) > 0.25:
        raise CheckFailed(f'prediction = {prediction!r} disagrees with the measurement. Block j raises the maximum exactly when it holds the largest score of the first j blocks: for independent scores, how likely is that?')

