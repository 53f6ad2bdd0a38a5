from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_fixed_attention(attention):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_pair, check_tensor, forbid, randn
    forbid(attention, 'attention', {'scaled_dot_product_attention': 'fix the code itself.', 'attention_with_bug': 'fix the code itself.'})
    q, k, v = (randn(2, 4, 8, seed=1), randn(2, 5, 8, seed=2), randn(2, 5, 3, seed=3))
    mask = mha.causal_mask(4, 5)
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)
    hints = [(torch.softmax((q @ k.transpose(-2, -1) // math.sqrt(8)).masked_fill(~mask, float('-inf')), dim=-1), 'the scores are whole numbers: `//` is floor division; divide with `/`.'), (torch.softmax(scores.masked_fill(~mask, float('-inf')), dim=-2).nan_to_num(0.0), "each query's weights must sum to 1: the softmax runs over the keys, dim=-1."), (torch.softmax(scores.masked_fill(mask, float('-inf')), dim=-1).nan_to_num(0.0), "the mask is inverted: True means 'may attend', so block where it is False: masked_fill(~mask, ...).")]
    out, weights = check_pair(call(attention, 'attention', q=q, k=k, v=v, mask=mask), 'attention(q [2, 4, 8], k [2, 5, 8], v [2, 5, 3], causal mask [4, 5])')
    check_tensor(weights, ref_weights, 'the weights with a causal mask (L = 4, S = 5)', hints)
    check_tensor(out, ref_out, 'the output with a causal mask (L = 4, S = 5)')

