from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_causal_mask(causal_mask):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    from mha.course.mistakes import hints as catalogued
    forbid(causal_mask, 'causal_mask', {'mha.causal_mask': 'build it with torch.ones(...).tril(...).', 'is_causal': 'build the mask yourself.'})
    for L, S in [(4, None), (4, 4), (2, 5), (1, 6)]:
        S_ = L if S is None else S
        expected = mha.causal_mask(L, S_)
        hints = catalogued('ex03', 'q1', inverted_mask=~expected, misaligned_mask=torch.ones(L, S_, dtype=torch.bool).tril(0))
        hints += [(torch.ones(L, S_, dtype=torch.bool).tril(S_ - L - 1), 'a token may attend to itself: keep the diagonal.'), (torch.ones(L, S_, dtype=torch.bool).tril(S_ - L + 1), 'a query sees the key just after it, a future token: the diagonal is off by one (query i may see keys up to position S - L + i, itself included, no further).')]
        args = {'L': L} if S is None else {'L': L, 'S': S}
        got = call(causal_mask, 'causal_mask', **args)
        check_tensor(got, expected, f"causal_mask({L}{('' if S is None else f', {S}')})", hints)

