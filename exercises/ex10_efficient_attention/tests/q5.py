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

