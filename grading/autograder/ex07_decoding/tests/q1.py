from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_shift_right(shift_right):
    import torch
    from mha.course.checks import call, check_tensor
    tgt = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]])
    expected = torch.tensor([[1, 5, 6, 7], [1, 8, 9, 2]])
    hints = [(torch.tensor([[6, 7, 2, 1], [9, 2, 0, 1]]), 'you shifted left: the decoder input at position t is the target at t - 1, so BOS goes first.'), (lambda s: list(s.shape) == [2, 5], 'keep the length T: with BOS put in front, there is one target token too many; which one does the decoder never need to read?'), (torch.tensor([[5, 6, 7, 1], [8, 9, 2, 1]]), 'BOS goes in front, not in place of the last token.')]
    got = call(shift_right, 'shift_right', tgt=tgt, bos_id=1)
    check_tensor(got, expected, 'shift_right([[5, 6, 7, 2], [8, 9, 2, 0]], bos_id=1)', hints)

@test_case(points=None, hidden=True)
def test_shift_right_random(shift_right):
    import torch
    from mha.course.checks import call, check_tensor, random_sizes
    for seed in range(2):
        B, T = random_sizes(2300 + seed, 2, 1, 9)
        tgt = torch.randint(3, 20, (B, T), generator=torch.Generator().manual_seed(seed))
        expected = torch.cat([torch.full((B, 1), 7), tgt[:, :-1]], dim=1)
        check_tensor(call(shift_right, 'shift_right', tgt=tgt, bos_id=7), expected, f'shift_right for targets {list(tgt.shape)}, bos_id=7')

