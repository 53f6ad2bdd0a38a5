from otter.test_files import test_case

OK_FORMAT = False

name = "q8"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_ffn_on_real_tokens(ffn_on_real_tokens):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_tensor, randn
    from mha.course.mistakes import hints
    torch.manual_seed(81)
    ff = mha.FeedForward(6, 12)
    x = randn(3, 5, 6, seed=82)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False], [True, False, False, False, False]])
    seen = []

    def recorded(t):
        seen.append(list(t.shape))
        return ff(t)
    with torch.no_grad():
        expected = ff(x) * mask[..., None]
        real_right = lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and bool(torch.allclose(got[mask], expected[mask], atol=1e-05)) and (not bool((got[~mask] == 0).all()))
        found = hints('ex05', 'q8', padding_kept=real_right)
        got = call(ffn_on_real_tokens, 'ffn_on_real_tokens', ffn=recorded, x=x, mask=mask)
        if got is None:
            check_tensor(got, expected, 'ffn_on_real_tokens(ffn, x [3, 5, 6], mask with lengths [5, 2, 1])')
        if len(seen) != 1:
            raise CheckFailed(f'ffn_on_real_tokens(ffn, x [3, 5, 6], mask with lengths [5, 2, 1]) called ffn {len(seen)} times (inputs {seen}); call it exactly once, on all the real tokens together.')
        if seen[0] != [8, 6]:
            raise CheckFailed(f'ffn_on_real_tokens(ffn, x [3, 5, 6], mask with lengths [5, 2, 1]) gave ffn a tensor {seen[0]}; it must receive only the 8 real tokens, a [8, 6] tensor.')
        check_tensor(got, expected, 'ffn_on_real_tokens(ffn, x [3, 5, 6], mask with lengths [5, 2, 1])', found)
        wide = lambda t: torch.cat([t, -t], dim=-1)
        got = call(ffn_on_real_tokens, 'ffn_on_real_tokens', ffn=wide, x=x, mask=mask)
        check_tensor(got, torch.cat([x, -x], dim=-1) * mask[..., None], 'ffn_on_real_tokens for an ffn whose output is wider than its input (D_out = 12)')

