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

