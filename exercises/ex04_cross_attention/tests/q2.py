from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_cross_attention_layer(CrossAttention):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_pair, check_tensor, forbid, randn
    from mha.course.mistakes import classic_attention, hints as catalogued
    forbid(getattr(CrossAttention, 'forward', None), 'CrossAttention.forward', {'scaled_dot_product_attention': 'compute the attention yourself.', 'MultiheadAttention': 'compute the attention yourself.', 'mha.MultiHeadAttention': 'compute the attention yourself.'})
    torch.manual_seed(0)
    layer = call(CrossAttention, 'CrossAttention', d_model=8, num_heads=2)
    ref = mha.MultiHeadAttention(8, 2)
    try:
        layer.load_state_dict(ref.state_dict())
    except Exception as exc:
        raise CheckFailed(f'keep the four projections q_proj, k_proj, v_proj, o_proj of the given __init__ ({type(exc).__name__})')
    x, memory = (randn(2, 6, 8, seed=11), randn(2, 7, 8, seed=12))
    errors = [('invalid for input of size', "split the keys and values with their own length S = memory.shape[1], not with the queries' L.")]
    with torch.no_grad():
        out, weights = check_pair(call(layer, 'CrossAttention.forward', x=x, memory=memory, error_hints=errors), 'CrossAttention.forward(x, memory)')
        ref_out, ref_weights = ref(x, memory, need_weights=True)
        classic = classic_attention(mha.split_heads(ref.q_proj(x), 2), mha.split_heads(ref.k_proj(memory), 2), mha.split_heads(ref.v_proj(memory), 2))
        hints = catalogued('ex04', 'q2', keys_from_x=lambda w: list(w.shape) == [2, 2, 6, 6], no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1])
        check_tensor(weights, ref_weights, 'the weights for L = 6, S = 7 without a mask', hints)
        check_tensor(out, ref_out, 'the output for L = 6, S = 7 without a mask')
        mask = mha.padding_mask(torch.tensor([7, 4]), 7)
        out, weights = check_pair(call(layer, 'CrossAttention.forward', x=x, memory=memory, memory_mask=mask), 'CrossAttention.forward(x, memory, memory_mask)')
        ref_out, ref_weights = ref(x, memory, mask=mask, need_weights=True)
        classic = classic_attention(mha.split_heads(ref.q_proj(x), 2), mha.split_heads(ref.k_proj(memory), 2), mha.split_heads(ref.v_proj(memory), 2), mask)
        hints = catalogued('ex04', 'q2', no_mask=classic['no_mask'][1], inverted_mask=classic['inverted_mask'][1], no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1])
        check_tensor(weights, ref_weights, 'the weights with memory lengths [7, 4]', hints)
        check_tensor(out, ref_out, 'the output with memory lengths [7, 4]')

