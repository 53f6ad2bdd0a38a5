from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_left_padded_positions(add_positions_left_padded, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    from mha.course.mistakes import hints as catalogued
    why = "count each row's positions from its first real token yourself."
    forbid(add_positions_left_padded, 'add_positions_left_padded', {'mha.gpt': why, 'mha.generation': why})
    x = randn(2, 5, 8, seed=95)
    mask = torch.tensor([[False, False, True, True, True], [True, True, True, True, True]])
    pe = mha.sinusoidal_positions(5, 8)
    expected = x.clone()
    for b in range(2):
        p = 0
        for t in range(5):
            if mask[b, t]:
                expected[b, t] += pe[p]
                p += 1
    one_late = x.clone()
    for b in range(2):
        one_late[b, mask[b]] += mha.sinusoidal_positions(6, 8)[1:int(mask[b].sum()) + 1]
    hints = catalogued('ex05', 'q6', off_by_one=one_late) + [(x + pe, "the first real token of a row must get position 0's encoding: count positions from it, not from column 0 (and leave the padding alone)."), (x + pe * mask[..., None], 'count the positions from the first real token of each row, not from column 0.'), (lambda y: bool(torch.allclose(y[mask], expected[mask], atol=1e-05)), 'the real tokens are right: the padding positions must stay exactly as they are.')]
    with reference(env, positional_encoding=mha.sinusoidal_positions):
        got = call(add_positions_left_padded, 'add_positions_left_padded', x=x, mask=mask, error_hints=catalogued('ex05', 'q6', off_by_one='out of bounds'))
    check_tensor(got, expected, 'add_positions_left_padded(x [2, 5, 8], mask with 2 and 0 padding positions on the left)', hints)

@test_case(points=None, hidden=True)
def test_left_padded_positions_random(add_positions_left_padded, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes, reference
    for seed in range(3):
        B, L, half = random_sizes(1950 + seed, 3, 2, 9)
        D = 2 * half
        lengths = torch.tensor(random_sizes(1960 + seed, B, 1, L + 1))
        mask = torch.arange(L)[None, :] >= (L - lengths)[:, None]
        x = randn(B, L, D, seed=seed)
        pe = mha.sinusoidal_positions(L, D)
        expected = x.clone()
        for b in range(B):
            for p, t in enumerate(range(L - int(lengths[b]), L)):
                expected[b, t] += pe[p]
        with reference(env, positional_encoding=mha.sinusoidal_positions):
            got = call(add_positions_left_padded, 'add_positions_left_padded', x=x, mask=mask)
        check_tensor(got, expected, f'add_positions_left_padded for x {list(x.shape)}, lengths {lengths.tolist()} (left-padded)')

