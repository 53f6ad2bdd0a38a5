from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_sliding_window_mask(sliding_window_mask):
    import torch
    from mha.course.checks import call, check_tensor, forbid
    from mha.course.mistakes import hints
    forbid(sliding_window_mask, 'sliding_window_mask', {'mha.causal_mask': 'build the mask yourself.', 'mha.sliding_window_mask': 'build the mask yourself.', 'mha.masks': 'build the mask yourself.'})

    def by_hand(L, S, window, start=None):
        allowed = torch.zeros(L, S, dtype=torch.bool)
        for i in range(L):
            p = (S - L if start is None else start) + i
            for j in range(S):
                allowed[i, j] = p - window < j <= p
        return allowed
    for L, S, window in ((4, 7, 3), (6, 6, 2), (1, 9, 4)):
        expected = by_hand(L, S, window)
        found = hints('ex03', 'q6', too_wide=by_hand(L, S, window + 1), top_left=by_hand(L, S, window, start=0) if S != L else None, inverted_mask=~expected)
        found = [hint for hint in found if hint[0] is not None]
        check_tensor(call(sliding_window_mask, 'sliding_window_mask', L=L, S=S, window=window), expected, f'sliding_window_mask(L={L}, S={S}, window={window})', found)

