from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rope_2d(rope_2d, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    forbid(rope_2d, 'rope_2d', {'apply_rope': 'use your own rope.', 'rope_angles': 'use your own rope.', 'rotate_half': 'use your own rope.'})
    from mha.course.mistakes import hints as catalogued
    x = randn(2, 6, 8, seed=107)
    rows, cols = (torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([0, 1, 0, 1, 0, 1]))
    expected = torch.cat([mha.apply_rope(x[..., :4], rows), mha.apply_rope(x[..., 4:], cols)], dim=-1)
    swapped = torch.cat([mha.apply_rope(x[..., :4], cols), mha.apply_rope(x[..., 4:], rows)], dim=-1)
    hints = catalogued('ex13', 'q5', swapped=swapped, summed=mha.apply_rope(x, rows + cols))
    with reference(env, rope=lambda x, positions, base=10000.0: mha.apply_rope(x, positions, base)):
        got = call(rope_2d, 'rope_2d', x=x, rows=rows, cols=cols)
    check_tensor(got, expected, 'rope_2d(x [2, 6, 8]) on a 3 x 2 grid', hints)

@test_case(points=None, hidden=True)
def test_rope_2d_relative(rope_2d, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    from mha.course.checks import reference
    for seed in range(2):
        R, C, quarter = random_sizes(5500 + seed, 3, 2, 5)
        d = 4 * quarter
        rows, cols = (torch.arange(R).repeat_interleave(C), torch.arange(C).repeat(R))
        q, k = (randn(R * C, d, seed=seed), randn(R * C, d, seed=seed + 1))
        with reference(env, rope=lambda x, positions, base=10000.0: mha.apply_rope(x, positions, base)):
            got = call(rope_2d, 'rope_2d', x=q, rows=rows, cols=cols, base=500.0)
            shifted_q = call(rope_2d, 'rope_2d', x=q, rows=rows + 5, cols=cols + 3, base=500.0)
            shifted_k = call(rope_2d, 'rope_2d', x=k, rows=rows + 5, cols=cols + 3, base=500.0)
            plain_k = call(rope_2d, 'rope_2d', x=k, rows=rows, cols=cols, base=500.0)
        expected = torch.cat([mha.apply_rope(q[:, :d // 2], rows, 500.0), mha.apply_rope(q[:, d // 2:], cols, 500.0)], dim=-1)
        check_tensor(got, expected, f'rope_2d on a {R} x {C} grid, d = {d}, base 500')
        check_tensor(shifted_q @ shifted_k.T, got @ plain_k.T, f'the scores on a {R} x {C} grid moved by 5 rows and 3 columns', atol=0.0001)

