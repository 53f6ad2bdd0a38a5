from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_scores(attention_scores):
    import math
    import torch
    from mha.course.checks import call, check_tensor, randn, running_example
    x, _, w_q, w_k, _ = running_example()
    q, k = (x[0] @ w_q, x[0] @ w_k)
    got = call(attention_scores, 'attention_scores', q=q, k=k)
    raw = q @ k.T
    hints = [(raw // math.sqrt(8), 'your scores are whole numbers: `//` is floor division. Divide with `/`.'), (raw, 'the scores are not scaled: divide them by math.sqrt(d_k).'), (raw / 8, 'you divided by d_k; divide by its square root, math.sqrt(d_k).'), (raw.T / math.sqrt(8), "rows and columns are swapped: row i must hold query i's scores, q @ k^T (not k @ q^T).")]
    check_tensor(got, raw / math.sqrt(8), 'attention_scores(q, k) on the running example', hints)
    q, k = (randn(2, 3, 4, 8, seed=1), randn(2, 3, 5, 8, seed=2))
    got = call(attention_scores, 'attention_scores', q=q, k=k, error_hints=[('size', 'transpose only the last two axes: k.transpose(-2, -1); k.T reverses every axis of a batched tensor.')])
    check_tensor(got, q @ k.transpose(-2, -1) / math.sqrt(8), 'attention_scores(q, k) with batch axes [2, 3], L = 4, S = 5')

