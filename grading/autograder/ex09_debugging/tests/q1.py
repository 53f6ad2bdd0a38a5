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
    from mha.course.mistakes import classic_attention, hints as catalogued
    forbid(attention, 'attention', {'scaled_dot_product_attention': 'fix the code itself.', 'attention_with_bug': 'fix the code itself.'})
    q, k, v = (randn(2, 4, 8, seed=1), randn(2, 5, 8, seed=2), randn(2, 5, 3, seed=3))
    mask = mha.causal_mask(4, 5)
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)
    classic = classic_attention(q, k, v, mask)
    hints = catalogued('ex09', 'q1', floor_scale=classic['floor_scale'][1], no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1], inverted_mask=classic['inverted_mask'][1])
    out, weights = check_pair(call(attention, 'attention', q=q, k=k, v=v, mask=mask), 'attention(q [2, 4, 8], k [2, 5, 8], v [2, 5, 3], causal mask [4, 5])')
    check_tensor(weights, ref_weights, 'the weights with a causal mask (L = 4, S = 5)', hints)
    check_tensor(out, ref_out, 'the output with a causal mask (L = 4, S = 5)')

@test_case(points=None, hidden=True)
def test_fixed_attention_random(attention):
    import torch
    import mha
    from mha.course.checks import call, check_pair, check_tensor, randn, random_sizes
    for seed in range(3):
        B, L, S, d = random_sizes(3100 + seed, 4, 1, 8)
        q, k, v = (randn(B, L, d, seed=seed), randn(B, S, d, seed=seed + 1), randn(B, S, d + 2, seed=seed + 2))
        lengths = torch.tensor(random_sizes(3110 + seed, B, 0, S + 1))
        mask = mha.padding_mask(lengths, S)[:, 0] if seed else None
        ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
        out, weights = check_pair(call(attention, 'attention', q=q, k=k, v=v, mask=mask), 'attention')
        check_tensor(weights, ref_weights, f'the weights for L = {L}, S = {S}, d = {d}, ' + (f'key lengths {lengths.tolist()}' if seed else 'no mask'))
        check_tensor(out, ref_out, f'the output for L = {L}, S = {S}, d = {d}')

@test_case(points=None, hidden=True)
def test_fixed_attention_fully_blocked_query(attention):
    import torch
    import mha
    from mha.course.checks import call, check_pair, check_tensor, randn
    q, k, v = (randn(2, 3, 8, seed=3120), randn(2, 4, 8, seed=3121), randn(2, 4, 5, seed=3122))
    lengths = torch.tensor([0, 3])
    mask = mha.padding_mask(lengths, 4)[:, 0]
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    out, weights = check_pair(call(attention, 'attention', q=q, k=k, v=v, mask=mask), 'attention')
    check_tensor(weights, ref_weights, 'the weights when every key of the first sequence is blocked (key lengths [0, 3]): zero weights, not nan')
    check_tensor(out, ref_out, 'the output when every key of the first sequence is blocked (key lengths [0, 3]): a zero output, not nan')

