from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_multi_head_attention(MultiHeadAttention, env):
    import math
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_pair, check_tensor, forbid, reference, running_example
    from mha.course.mistakes import classic_attention, hints as catalogued
    banned = {'scaled_dot_product_attention': 'compute the scores, the softmax and weights @ v yourself.', 'MultiheadAttention': 'build it from the projections.', 'mha.MultiHeadAttention': 'build it from the projections.'}
    forbid(getattr(MultiHeadAttention, 'forward', None), 'MultiHeadAttention.forward', banned)
    x, memory, _, _, _ = running_example()
    torch.manual_seed(0)
    layer = call(MultiHeadAttention, 'MultiHeadAttention', d_model=8, num_heads=2)
    ref_layer = mha.MultiHeadAttention(8, 2)
    try:
        layer.load_state_dict(ref_layer.state_dict())
    except Exception as exc:
        raise CheckFailed(f'keep the four projections q_proj, k_proj, v_proj, o_proj of the given __init__ ({type(exc).__name__}: {str(exc).splitlines()[0]})')
    errors = [('invalid for input of size', "split the keys and values with their own length S, read from the keys, not with the queries' L (split_heads does that for you).")]
    for name, key in [('self-attention (L = S = 6)', x), ('cross-attention (L = 6, S = 7)', memory)]:
        with torch.no_grad():
            with reference(env, split_heads=mha.split_heads, merge_heads=mha.merge_heads):
                result = call(layer, 'MultiHeadAttention.forward', query=x, key=key, value=key, error_hints=errors)
            out, weights = check_pair(result, f'MultiHeadAttention.forward on {name}')
            ref_out, ref_weights = ref_layer(x, key, key, need_weights=True)
            q, k, v = (mha.split_heads(ref_layer.q_proj(x), 2), mha.split_heads(ref_layer.k_proj(key), 2), mha.split_heads(ref_layer.v_proj(key), 2))
            wrong_scale = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
            scores = q @ k.transpose(-2, -1) / math.sqrt(4)
            classic = classic_attention(q, k, v)
            hints = [(wrong_scale, 'scale the scores by sqrt(head_dim), the width of one head, not by sqrt(d_model).'), (torch.softmax(scores, dim=1), 'the softmax runs over the keys, the last axis, not over the heads.')]
            hints += catalogued('ex02', 'q3', no_scale=classic['no_scale'][1], softmax_axis=classic['softmax_axis'][1])
            check_tensor(weights, ref_weights, f'the weights on {name}', hints)
            hints = [(mha.merge_heads(ref_weights @ v), 'apply the output projection self.o_proj to the merged heads.')]
            check_tensor(out, ref_out, f'the output on {name}', hints)

