from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rope(rope):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import hints as catalogued
    forbid(rope, 'rope', {'mha.apply_rope': 'write the rotation yourself.', 'mha.rope_angles': 'compute the angles yourself.', 'mha.rotate_half': 'split the halves yourself.'})
    x = randn(2, 3, 6, 8, seed=41)
    positions = torch.arange(6)
    expected = mha.apply_rope(x, positions)
    d = 8
    theta = 10000.0 ** (-torch.arange(0, d, 2).float() / d)
    angle = positions.float()[:, None] * theta
    interleaved = torch.stack([x[..., 0::2] * angle.cos() - x[..., 1::2] * angle.sin(), x[..., 1::2] * angle.cos() + x[..., 0::2] * angle.sin()], dim=-1).flatten(-2)
    x1, x2 = (x[..., :4], x[..., 4:])
    wrong_sign = torch.cat([x1 * angle.cos() + x2 * angle.sin(), x2 * angle.cos() - x1 * angle.sin()], dim=-1)
    slow = 10000.0 ** (-torch.arange(0, d // 2).float() / d)
    slow_angle = positions.float()[:, None] * slow
    exponent_i = torch.cat([x1 * slow_angle.cos() - x2 * slow_angle.sin(), x2 * slow_angle.cos() + x1 * slow_angle.sin()], dim=-1)
    hints = [(interleaved, 'that is the interleaved layout (pairs 0-1, 2-3, ...); here pair i is feature i of the first half with feature i of the second half.'), (wrong_sign, 'the rotation goes the other way: a positive angle turns each pair counter-clockwise; check the signs of the sine terms.'), (x, 'nothing was rotated.')]
    hints += catalogued('ex13', 'q1', exponent_i=exponent_i)
    got = call(rope, 'rope', x=x, positions=positions)
    check_tensor(got, expected, 'rope(x [2, 3, 6, 8], arange(6))', hints)
    got = call(rope, 'rope', x=x[:, :, :2], positions=torch.tensor([7, 30]), base=100.0)
    check_tensor(got, mha.apply_rope(x[:, :, :2], torch.tensor([7, 30]), 100.0), 'rope(x [2, 3, 2, 8], positions [7, 30], base=100)')

@test_case(points=None, hidden=True)
def test_rope_random(rope):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, L, half, start = random_sizes(3700 + seed, 4, 1, 9)
        x = randn(B, L, 2 * half, seed=seed)
        positions = torch.arange(start, start + L) * (seed + 1)
        base = [10000.0, 500.0, 1000000.0][seed]
        check_tensor(call(rope, 'rope', x=x, positions=positions, base=base), mha.apply_rope(x, positions, base), f'rope for x {list(x.shape)}, positions {positions.tolist()}, base {base:g}', atol=0.0001)

