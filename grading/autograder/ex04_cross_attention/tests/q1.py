from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_cross_attention(cross_attention):
    import torch
    import mha
    from mha.course.checks import call, check_pair, check_tensor, forbid, running_example
    forbid(cross_attention, 'cross_attention', {'scaled_dot_product_attention': 'write the scores and the softmax yourself.'})
    x, memory, w_q, w_k, w_v = running_example()
    errors = [('must match', 'queries come from x (L rows); keys AND values come from memory (S rows).')]
    result = call(cross_attention, 'cross_attention', x=x, memory=memory, W_q=w_q, W_k=w_k, W_v=w_v, error_hints=errors)
    out, weights = check_pair(result, 'cross_attention(x, memory, ...)')
    ref_out, ref_weights = mha.scaled_dot_product_attention(x @ w_q, memory @ w_k, memory @ w_v)
    raw = x @ w_q @ (memory @ w_k).transpose(-2, -1)
    hints = [(lambda w: list(w.shape) == [1, 7, 7], "your queries come from the memory: in cross-attention the queries come from the decoder's tokens x, the keys and values from memory."), (lambda w: list(w.shape) == [1, 6, 6], 'this is self-attention of x: the keys and values must come from memory.'), (torch.softmax(raw, dim=-1), 'the scores are not scaled: divide them by sqrt(d_k) before the softmax.'), (torch.softmax(raw / 8 ** 0.5, dim=-2), 'the softmax runs over the keys (the memory tokens), the last axis.')]
    check_tensor(weights, ref_weights, 'the weights of cross_attention on the running example (L = 6, S = 7)', hints)
    check_tensor(out, ref_out, 'the output of cross_attention on the running example')

@test_case(points=None, hidden=True)
def test_cross_attention_random(cross_attention):
    import mha
    from mha.course.checks import call, check_pair, check_tensor, randn, random_sizes
    for seed in range(3):
        B, L, D, d = random_sizes(1200 + seed, 4, 1, 8)
        S = L + 2 + seed
        x, memory = (randn(B, L, D, seed=seed), randn(B, S, D, seed=seed + 1))
        w_q, w_k, w_v = (randn(D, d, seed=seed + 2), randn(D, d, seed=seed + 3), randn(D, d + 1, seed=seed + 4))
        out, weights = check_pair(call(cross_attention, 'cross_attention', x=x, memory=memory, W_q=w_q, W_k=w_k, W_v=w_v), 'cross_attention')
        ref_out, ref_weights = mha.scaled_dot_product_attention(x @ w_q, memory @ w_k, memory @ w_v)
        check_tensor(weights, ref_weights, f'the weights for L = {L}, S = {S}')
        check_tensor(out, ref_out, f'the output for L = {L}, S = {S}')

