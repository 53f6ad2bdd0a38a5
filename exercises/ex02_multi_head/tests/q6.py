from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_wide_values(multi_head_attention, env):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_pair, check_tensor, forbid, randn, reference
    from mha.course.mistakes import classic_attention, hints as catalogued

    def per_head(x, W_q, W_k, W_v, W_o, H):
        """The reference: one head at a time, each with its own block of columns."""
        d_k, d_v = (W_q.shape[1] // H, W_v.shape[1] // H)
        outs, all_weights = ([], [])
        for h in range(H):
            q = x @ W_q[:, h * d_k:(h + 1) * d_k]
            k = x @ W_k[:, h * d_k:(h + 1) * d_k]
            v = x @ W_v[:, h * d_v:(h + 1) * d_v]
            w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
            outs.append(w @ v)
            all_weights.append(w)
        return (torch.cat(outs, dim=-1) @ W_o, torch.stack(all_weights, dim=1))
    forbid(multi_head_attention, 'multi_head_attention', {'scaled_dot_product_attention': 'compute the attention yourself.', 'MultiheadAttention': 'compute the attention yourself.', 'mha.MultiHeadAttention': 'compute the attention yourself.'})
    x = randn(2, 5, 8, seed=61)
    W_q, W_k, W_v, W_o = (randn(8, 4, seed=62), randn(8, 4, seed=63), randn(8, 12, seed=64), randn(12, 8, seed=65))
    ref_out, ref_weights = per_head(x, W_q, W_k, W_v, W_o, 2)
    scores = mha.split_heads(x @ W_q, 2) @ mha.split_heads(x @ W_k, 2).transpose(-2, -1)
    hints = [(torch.softmax(scores / math.sqrt(6), dim=-1), 'scale by the square root of the width the queries and keys are compared in, d_k, not d_v.'), (torch.softmax(scores / math.sqrt(8), dim=-1), 'scale by sqrt(d_k), the query/key width of one head, not sqrt(D).')]
    classic = classic_attention(mha.split_heads(x @ W_q, 2), mha.split_heads(x @ W_k, 2), mha.split_heads(x @ W_v, 2))
    hints += catalogued('ex02', 'q6', no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1], d_model_over_heads=torch.softmax(scores / math.sqrt(8 / 2), dim=-1))
    errors = [('invalid for input of size', 'the values have their own width d_v per head, read from W_v: split them with it, not with d_k.')]
    with reference(env, split_heads=mha.split_heads, merge_heads=mha.merge_heads):
        result = call(multi_head_attention, 'multi_head_attention', x=x, W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o, num_heads=2, error_hints=errors)
    out, weights = check_pair(result, 'multi_head_attention(x [2, 5, 8], ..., num_heads=2) with d_k = 2, d_v = 6')
    check_tensor(weights, ref_weights, 'the weights for d_k = 2, d_v = 6', hints)
    check_tensor(out, ref_out, 'the output for d_k = 2, d_v = 6')

