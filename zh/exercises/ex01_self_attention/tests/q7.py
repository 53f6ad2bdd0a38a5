from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_fixed_attention(fixed_attention, nan_example, env):
    import math
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_pair, check_tensor, forbid, randn
    from mha.course.mistakes import hints

    def broken(q, k, v):
        scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
        exps = torch.exp(scores - scores.max())
        weights = exps / exps.sum(dim=-1, keepdim=True)
        return (weights @ v, weights)
    if nan_example is None:
        raise CheckFailed('nan_example is None: set it to a tuple (q, k, v) on which broken_attention returns nan.')
    if not isinstance(nan_example, (tuple, list)) or len(nan_example) != 3 or (not all((isinstance(t, torch.Tensor) and t.is_floating_point() for t in nan_example))):
        raise CheckFailed('nan_example must be a tuple (q, k, v) of three float tensors.')
    q, k, v = (t.float() for t in nan_example)
    if not all((bool(torch.isfinite(t).all()) for t in (q, k, v))):
        raise CheckFailed('nan_example: q, k and v must be finite (no inf, no nan): the nan must come from the function, not from the input.')
    try:
        exact = mha.scaled_dot_product_attention(q.double(), k.double(), v.double())[0]
        broken_out = broken(q, k, v)[0]
    except RuntimeError as exc:
        raise CheckFailed(f'nan_example: the shapes do not fit attention (q [..., L, d_k], k [..., S, d_k], v [..., S, d_v]): {exc}') from None
    if not bool(torch.isfinite(exact).all()):
        raise CheckFailed('nan_example: exact attention is not finite on it either; the example must break only broken_attention.')
    if not bool(broken_out.isnan().any()):
        raise CheckFailed('nan_example: broken_attention returns no nan on it. Which number does it subtract before exp, and what happens to a row whose scores are all far below that number?')
    forbid(fixed_attention, 'fixed_attention', {'softmax': "repair the colleague's code: it computes the softmax itself.", 'Softmax': "repair the colleague's code: it computes the softmax itself.", 'scaled_dot_product_attention': "repair the colleague's code: it computes the softmax itself."})
    q = torch.tensor([[[3.0, 0.0], [-3.0, 0.0], [0.5, 0.2]]]) * 80
    k = torch.tensor([[[1.0, 0.0], [0.9, 0.1], [-1.0, 0.3], [0.0, 1.0]]])
    v = randn(1, 4, 2, seed=71)
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v)
    found = hints('ex01', 'q7', global_max=lambda w: bool(torch.isnan(w).any()))
    out, weights = check_pair(call(fixed_attention, 'fixed_attention', q=q, k=k, v=v), 'fixed_attention(q, k, v)')
    check_tensor(weights, ref_weights, 'the weights of fixed_attention for q [1, 3, 2] whose rows have very different sizes, k [1, 4, 2]', found)
    q, k, v = (randn(2, 3, 8, seed=72), randn(2, 5, 8, seed=73), randn(2, 5, 2, seed=74))
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v)
    value_width = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(2), dim=-1)
    out, weights = check_pair(call(fixed_attention, 'fixed_attention', q=q, k=k, v=v), 'fixed_attention(q, k, v)')
    check_tensor(weights, ref_weights, 'the weights of fixed_attention for q [2, 3, 8], k [2, 5, 8], v [2, 5, 2] (d_v != d_k)', hints('ex01', 'q7', value_width=value_width))
    check_tensor(out, ref_out, 'the output of fixed_attention for q [2, 3, 8], k [2, 5, 8], v [2, 5, 2]')

