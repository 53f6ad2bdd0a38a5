from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_cached_cross_attention(memory_kv, cross_attend_step):
    import math
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_tensor, check_tuple, forbid, randn
    from mha.course.mistakes import classic_attention, hints as catalogued
    banned = {'scaled_dot_product_attention': 'compute the attention yourself.', 'MultiheadAttention': 'compute the attention yourself.', 'mha.MultiHeadAttention': 'compute the attention yourself.'}
    forbid(cross_attend_step, 'cross_attend_step', banned)
    B, T, S, D, H = (2, 4, 7, 8, 2)
    x, memory = (randn(B, T, D, seed=81), randn(B, S, D, seed=82))
    W_q, W_k, W_v, W_o = (randn(D, D, seed=83 + i) / math.sqrt(D) for i in range(4))
    mask = mha.padding_mask(torch.tensor([7, 4]), S)
    k_ref, v_ref = (mha.split_heads(memory @ W_k, H), mha.split_heads(memory @ W_v, H))
    full, _ = mha.scaled_dot_product_attention(mha.split_heads(x @ W_q, H), k_ref, v_ref, mask)
    full = mha.merge_heads(full) @ W_o
    k, v = check_tuple(call(memory_kv, 'memory_kv', memory=memory, W_k=W_k, W_v=W_v, num_heads=H), 'memory_kv(memory [2, 7, 8], W_k, W_v, 2)', ('k', 'v'))
    check_tensor(k, k_ref, 'the keys k from memory_kv (memory [2, 7, 8], 2 heads)', [(lambda t: list(t.shape) == [B, S, D], 'split the keys into heads: [B, H, S, d], so that every step only needs a matrix product per head.')])
    check_tensor(v, v_ref, 'the values v from memory_kv (memory [2, 7, 8], 2 heads)')
    for t in range(T):
        got = call(cross_attend_step, 'cross_attend_step', x_t=x[:, t:t + 1], k=k_ref, v=v_ref, W_q=W_q, W_o=W_o, num_heads=H, memory_mask=mask)
        classic = classic_attention(mha.split_heads(x[:, t:t + 1] @ W_q, H), k_ref, v_ref, mask)
        step = {name: mha.merge_heads(out) @ W_o for name, (out, _) in classic.items()}
        q_t = mha.split_heads(x[:, t:t + 1] @ W_q, H)
        by_width = torch.softmax((q_t @ k_ref.transpose(-2, -1) / math.sqrt(D)).masked_fill(~mask, float('-inf')), dim=-1)
        hints = catalogued('ex04', 'q4', d_model_scale=mha.merge_heads(by_width @ v_ref) @ W_o, no_mask=step['no_mask'], inverted_mask=step['inverted_mask'], no_scale=step['no_scale'], softmax_axis=step['softmax_axis'])
        check_tensor(got, full[:, t:t + 1], f'cross_attend_step at step {t + 1} (= row {t} of full cross-attention, memory lengths [7, 4])', hints)

