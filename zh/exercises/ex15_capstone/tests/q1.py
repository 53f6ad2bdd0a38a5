from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_attention(CausalSelfAttention):
    import math
    import torch
    from mha.course import capstone
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import hints as catalogued
    forbid(CausalSelfAttention.forward, 'CausalSelfAttention.forward', {'MultiHeadAttention': 'write the attention yourself.', 'MultiheadAttention': 'write the attention yourself.', 'scaled_dot_product_attention': 'compute the scores, the mask and the softmax yourself.', 'super': 'compute the attention in forward yourself, not with the forward of a parent class.'})
    B, T, D, H = (2, 6, 16, 4)
    torch.manual_seed(1)
    ref = capstone.CausalSelfAttention(D, H).eval()
    layer = call(CausalSelfAttention, 'CausalSelfAttention', d_model=D, num_heads=H)
    call(layer.load_state_dict, 'load_state_dict', ref.state_dict(), error_hints=[('key', 'keep the given __init__: the four projections are named q_proj, k_proj, v_proj, o_proj.')])
    x = randn(B, T, D, seed=151)
    with torch.no_grad():
        expected = ref(x)

    def variant(scale, causal=True, axis=-1, interleaved=False, inverted=False, by_view=False, merge_by_view=False):

        def heads(t):
            if by_view:
                return t.view(B, H, T, D // H)
            if interleaved:
                return t.view(B, T, D // H, H).permute(0, 3, 1, 2)
            return t.view(B, T, H, D // H).transpose(1, 2)
        with torch.no_grad():
            q, k, v = (heads(ref.q_proj(x)), heads(ref.k_proj(x)), heads(ref.v_proj(x)))
            scores = q @ k.transpose(-2, -1) / scale
            if causal:
                future = torch.ones(T, T, dtype=torch.bool).triu(1)
                scores = scores.masked_fill(~future if inverted else future, float('-inf'))
            out = torch.softmax(scores, dim=axis) @ v
            if interleaved:
                out = out.permute(0, 2, 3, 1).reshape(B, T, D)
            elif merge_by_view:
                out = out.reshape(B, T, D)
            else:
                out = out.transpose(1, 2).reshape(B, T, D)
            return ref.o_proj(out)
    d_k = D // H
    hints = catalogued('ex15', 'q1', no_mask=variant(math.sqrt(d_k), causal=False), inverted_mask=variant(math.sqrt(d_k), inverted=True), no_scale=variant(1.0), softmax_axis=variant(math.sqrt(d_k), axis=-2))
    split_by_view = [variant(math.sqrt(d_k), by_view=True), variant(math.sqrt(d_k), by_view=True, merge_by_view=True)]
    hints += catalogued('ex15', 'q1', heads_by_view=lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and any((bool(torch.allclose(got, v, atol=1e-05)) for v in split_by_view)))
    hints += [(variant(math.sqrt(D)), 'scale by the square root of the width of ONE head, d_k, not of D.'), (variant(math.sqrt(d_k), interleaved=True), 'head h takes the contiguous columns h * d_k ... (h + 1) * d_k: split the last axis into heads first, then bring the head axis before the sequence axis.')]
    with torch.no_grad():
        got = call(layer, 'CausalSelfAttention(16, 4)', x=x)
    check_tensor(got, expected, 'CausalSelfAttention(16, 4) on x [2, 6, 16], weights copied from the reference', hints)

@test_case(points=None, hidden=False)
def test_future_tokens_do_not_change_earlier_outputs(CausalSelfAttention):
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, randn
    torch.manual_seed(2)
    layer = call(CausalSelfAttention, 'CausalSelfAttention', d_model=8, num_heads=2)
    x = randn(1, 7, 8, seed=152)
    changed = x.clone()
    changed[:, 4:] = randn(1, 3, 8, seed=153)
    with torch.no_grad():
        before = call(layer, 'CausalSelfAttention(8, 2)', x=x)
        after = call(layer, 'CausalSelfAttention(8, 2)', x=changed)
    if before is None or after is None:
        raise CheckFailed('CausalSelfAttention(8, 2) returned None. The stub still ends with `return None`: replace it with your implementation.')
    why = "an earlier position's output changed with later tokens: either the mask lets a position see the positions after it, or the split into heads mixes positions (then the check above names it too)."
    check_tensor(after[:, :4], before[:, :4], 'the outputs at positions 0-3 after changing only the tokens 4-6 of x [1, 7, 8] (they must not change: a position sees only itself and earlier ones)', [(lambda got: True, why)], atol=1e-05)

