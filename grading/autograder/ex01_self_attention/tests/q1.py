from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_scores(attention_scores):
    import math
    import torch
    from mha.course.checks import call, check_tensor, randn, running_example
    from mha.course.mistakes import hints
    x, _, w_q, w_k, _ = running_example()
    q, k = (x[0] @ w_q, x[0] @ w_k)
    got = call(attention_scores, 'attention_scores', q=q, k=k)
    raw = q @ k.T
    found = hints('ex01', 'q1', floor_scale=raw // math.sqrt(8), no_scale=raw, divided_by_d_k=raw / 8, swapped=raw.T / math.sqrt(8))
    check_tensor(got, raw / math.sqrt(8), 'attention_scores(q, k) on the running example', found)
    q, k = (randn(2, 3, 4, 6, seed=1), randn(2, 3, 5, 6, seed=2))
    got = call(attention_scores, 'attention_scores', q=q, k=k, error_hints=hints('ex01', 'q1', batch_transpose='size'))
    raw = q @ k.transpose(-2, -1)
    check_tensor(got, raw / math.sqrt(6), 'attention_scores(q, k) with batch axes [2, 3], L = 4, S = 5, d_k = 6', hints('ex01', 'q1', fixed_scale=raw / math.sqrt(8)))

@test_case(points=None, hidden=True)
def test_scores_random_shapes(attention_scores):
    import math
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, H, L, d = random_sizes(100 + seed, 4)
        S = L + 1 + seed
        batch = [(), (B,), (B, H)][seed]
        q, k = (randn(*batch, L, d, seed=seed), randn(*batch, S, d, seed=seed + 10))
        got = call(attention_scores, 'attention_scores', q=q, k=k)
        check_tensor(got, q @ k.transpose(-2, -1) / math.sqrt(d), f'attention_scores(q, k) with batch axes {list(batch)}, L = {L}, S = {S}, d_k = {d}')

