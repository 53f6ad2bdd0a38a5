from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_to_rotate_half(to_rotate_half):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn
    from mha.course.mistakes import hints as catalogued
    H, d, D = (2, 8, 12)
    W_q, W_k = (randn(H * d, D, seed=105), randn(H * d, D, seed=106))
    x, positions = (randn(1, 6, D, seed=108), torch.arange(6) * 3)

    def scores(Wq, Wk, layout):
        qs, ks = (mha.split_heads(x @ W.T, H) for W in (Wq, Wk))
        return mha.apply_rope(qs, positions, layout=layout) @ mha.apply_rope(ks, positions, layout=layout).transpose(-2, -1)

    def rows(order):
        """A reordering of each head's rows, or of all H * d rows at once."""
        return lambda W: W.view(H, -1, D)[:, order].reshape(H * d, D) if len(order) == d else W[order]
    pairs_first = torch.stack([torch.arange(d // 2), torch.arange(d // 2, d)], dim=-1).flatten()
    whole = torch.cat([torch.arange(0, H * d, 2), torch.arange(1, H * d, 2)])
    columns = torch.cat([torch.arange(0, D, 2), torch.arange(1, D, 2)])
    converted = lambda f: scores(f(W_q), f(W_k), 'half')
    hints = catalogued('ex13', 'q4', whole_width=converted(rows(whole)), inverse=converted(rows(pairs_first)), columns=converted(lambda W: W[:, columns]))
    new_q = call(to_rotate_half, 'to_rotate_half', weight=W_q, num_heads=H)
    new_k = call(to_rotate_half, 'to_rotate_half', weight=W_k, num_heads=H)
    got = scores(new_q, new_k, 'half') if isinstance(new_q, torch.Tensor) and isinstance(new_k, torch.Tensor) else new_q
    check_tensor(got, scores(W_q, W_k, 'interleaved'), 'the scores of 2 heads of d = 8 after converting the query and key weights with to_rotate_half', hints, atol=0.001)

