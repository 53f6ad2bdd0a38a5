from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rope_left_padded(rope_left_padded, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference, translate

    def rope_any(x, positions, base=10000.0):
        """mha.apply_rope for positions [L], [B, L], or any shape that broadcasts to x's [..., L] (e.g. [B, 1, L])."""
        positions = torch.as_tensor(positions)
        if positions.dim() == 1 or (positions.dim() == 2 and x.dim() == 4 and (positions.shape[0] == x.shape[0])):
            return mha.apply_rope(x, positions, base)
        try:
            each = positions.expand(x.shape[:-1]).reshape(-1, x.shape[-2])
        except RuntimeError:
            raise ValueError(translate(f'rope: positions {list(positions.shape)} do not broadcast to the rows of x {list(x.shape[:-1])}')) from None
        return mha.apply_rope(x.reshape(-1, 1, *x.shape[-2:]), each, base).reshape(x.shape)
    why = "count each row's positions from its first real token yourself."
    forbid(rope_left_padded, 'rope_left_padded', {'mha.gpt': why, 'mha.generation': why})
    x = randn(2, 2, 5, 8, seed=61)
    mask = torch.tensor([[False, False, True, True, True], [True, True, True, True, True]])
    expected = x.clone()
    expected[0, :, 2:] = mha.apply_rope(x[0, :, 2:], torch.arange(3))
    expected[1] = mha.apply_rope(x[1], torch.arange(5))
    hints = [(mha.apply_rope(x, torch.arange(5)), 'the first real token of a row is at position 0: count from it, not from column 0 (and leave the padding as it is).'), (torch.where(mask[:, None, :, None], mha.apply_rope(x, torch.arange(5)), x), 'count the positions from the first real token of each row, not from column 0.'), (lambda y: bool(torch.allclose(y[0, :, 2:], expected[0, :, 2:], atol=1e-05)) and (not bool(torch.allclose(y[0, :, :2], x[0, :, :2]))), 'the real tokens are right: leave the padding positions exactly as they are.')]
    with reference(env, rope=rope_any):
        got = call(rope_left_padded, 'rope_left_padded', x=x, mask=mask)
    check_tensor(got, expected, 'rope_left_padded(x [2, 2, 5, 8], mask with 2 and 0 padding positions on the left)', hints)

