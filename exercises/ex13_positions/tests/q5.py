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

