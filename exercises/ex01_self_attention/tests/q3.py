from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_attention(attention, env):
    import math
    import torch
    import torch.nn.functional as F
    import mha
    from mha.course.checks import call, check_pair, check_tensor, forbid, reference, running_example, randn
    from mha.course.mistakes import classic_attention, hints
    forbid(attention, 'attention', {'scaled_dot_product_attention': 'combine your own attention_scores and softmax.', 'MultiheadAttention': 'combine your own attention_scores and softmax.'})
    scores_ref = lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    softmax_ref = lambda s: torch.softmax(s, dim=-1)
    x, _, w_q, w_k, w_v = running_example()
    q, k, v = (x[0] @ w_q, x[0] @ w_k, x[0] @ w_v)
    with reference(env, attention_scores=scores_ref, softmax=softmax_ref):
        result = call(attention, 'attention', q=q, k=k, v=v, error_hints=hints('ex01', 'q3', elementwise='must match'))
    out, weights = check_pair(result, 'attention(q, k, v)')
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v)
    classic = classic_attention(q, k, v)
    found = hints('ex01', 'q3', no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1])
    check_tensor(weights, ref_weights, 'the weights of attention(q, k, v) on the running example', found)
    found = hints('ex01', 'q3', no_softmax=scores_ref(q, k) @ v, weights_transposed=ref_weights.T @ v)
    check_tensor(out, ref_out, 'the output of attention(q, k, v) on the running example', found)
    check_tensor(out, F.scaled_dot_product_attention(q, k, v), 'attention(q, k, v) against F.scaled_dot_product_attention')
    q, k, v = (randn(2, 4, 8, seed=4), randn(2, 7, 8, seed=5), randn(2, 7, 5, seed=6))
    with reference(env, attention_scores=scores_ref, softmax=softmax_ref):
        result = call(attention, 'attention', q=q, k=k, v=v)
    out, weights = check_pair(result, 'attention(q, k, v)')
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v)
    check_tensor(weights, ref_weights, 'the weights of attention(q, k, v) with L = 4, S = 7')
    check_tensor(out, ref_out, 'the output of attention(q, k, v) with L = 4, S = 7, d_v = 5')

