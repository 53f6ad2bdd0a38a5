from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_masked_attention(masked_attention):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_pair, check_tensor, forbid, randn, running_example
    from mha.course.mistakes import classic_attention, hints as catalogued
    forbid(masked_attention, 'masked_attention', {'scaled_dot_product_attention': 'apply the mask to the scores yourself.'})
    x, _, w_q, w_k, w_v = running_example()
    q, k, v = (x @ w_q, x @ w_k, x @ w_v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)
    mask = mha.causal_mask(6)
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    out, weights = check_pair(call(masked_attention, 'masked_attention', q=q, k=k, v=v, mask=mask), 'masked_attention(q, k, v, causal mask)')
    classic = classic_attention(q, k, v, mask)
    hints = catalogued('ex03', 'q3', inverted_mask=classic['inverted_mask'][1], no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1])
    hints += [(torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1), "filling the blocked scores with 0 blocks nothing (exp(0) = 1): fill them with float('-inf')."), (torch.softmax(scores, dim=-1), 'the mask is not applied.')]
    check_tensor(weights, ref_weights, 'the weights with a causal mask on the running example', hints)
    check_tensor(out, ref_out, 'the output with a causal mask on the running example')
    q, k, v = (randn(2, 4, 8, seed=7), randn(2, 5, 8, seed=8), randn(2, 5, 8, seed=9))
    mask = mha.padding_mask(torch.tensor([3, 0]), 5)[:, 0]
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    out, weights = check_pair(call(masked_attention, 'masked_attention', q=q, k=k, v=v, mask=mask), 'masked_attention(q, k, v, padding mask)')
    hints = [(lambda w: bool(torch.isnan(w).any()), 'a query whose keys are all blocked gets 0/0 = nan from the softmax: replace those nan weights by 0 after the softmax, with torch.nan_to_num(weights, nan=0.0) or torch.where(mask.any(-1, keepdim=True), weights, 0.0). Multiplying by the mask keeps them nan (nan * 0 = nan).')]
    check_tensor(weights, ref_weights, 'the weights with padding lengths [3, 0] (the second sequence is all padding)', hints)
    check_tensor(out, ref_out, 'the output with padding lengths [3, 0]', hints)
    out, weights = check_pair(call(masked_attention, 'masked_attention', q=q, k=k, v=v, mask=None), 'masked_attention(q, k, v, None)')
    check_tensor(out, mha.scaled_dot_product_attention(q, k, v)[0], 'the output without a mask')

