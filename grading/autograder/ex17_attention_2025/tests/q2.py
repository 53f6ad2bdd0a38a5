from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_earliest_influence(earliest_influence, prediction):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_equal, note, randn
    from mha.course.mistakes import hints as catalogued
    if prediction is None:
        raise CheckFailed('prediction is None: set it to a position, e.g. prediction = 3 (the hidden test checks it against the measurement).')
    if isinstance(prediction, bool) or not isinstance(prediction, int):
        raise CheckFailed(f'prediction should be a position (an int); got {prediction!r}.')
    torch.manual_seed(172)
    layers = [mha.MultiHeadAttention(8, 2) for _ in range(2)]

    def run(x):
        with torch.no_grad():
            for layer in layers:
                x = x + layer(x, mask=mha.sliding_window_mask(x.shape[1], 4))[0]
        return x
    got = call(earliest_influence, 'earliest_influence', run=run, x=randn(1, 16, 8, seed=172), position=12)
    check_equal(got, 6, 'earliest_influence for two layers of window 4 at position 12', catalogued('ex17', 'q2', measure_off_by_one=5, whole_output=0))
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

@test_case(points=None, hidden=True)
def test_earliest_influence_other_stacks(earliest_influence):
    import torch
    import mha
    from mha.course.checks import call, check_equal, randn
    for seed, windows in enumerate([[2, 6], [3, 3, 3], [7]]):
        torch.manual_seed(seed)
        layers = [mha.MultiHeadAttention(8, 2) for _ in windows]

        def run(x):
            with torch.no_grad():
                for layer, window in zip(layers, windows):
                    x = x + layer(x, mask=mha.sliding_window_mask(x.shape[1], window))[0]
            return x
        position = 15 + seed
        expected = position - sum((w - 1 for w in windows))
        got = call(earliest_influence, 'earliest_influence', run=run, x=randn(2, 20, 8, seed=seed), position=position)
        check_equal(got, expected, f'earliest_influence for windows {windows} at position {position}')

@test_case(points=None, hidden=True)
def test_prediction(prediction):
    from mha.course.checks import CheckFailed
    if prediction != 19 - (4 + 2 + 4):
        raise CheckFailed(f'prediction = {prediction!r} is not what the stack does: measure it with your earliest_influence, then count how many positions back one layer of window W reaches.')

