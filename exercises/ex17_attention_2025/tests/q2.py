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

