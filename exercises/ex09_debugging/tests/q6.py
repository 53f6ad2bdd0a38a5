from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 4
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_padded_attention(padded_attention):
    import math
    from types import SimpleNamespace
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import classic_attention, hints as catalogued
    why = 'fix the code itself.'
    forbid(padded_attention, 'padded_attention', {'scaled_dot_product_attention': why, 'buggy_padded_attention': why, 'MultiHeadAttention': why, 'multi_head_attention_forward': why})
    torch.manual_seed(0)
    layer = mha.MultiHeadAttention(8, 2).eval()
    x, lengths = (randn(2, 5, 8, seed=103), torch.tensor([5, 3]))
    with torch.no_grad():
        expected = layer(x, mask=mha.padding_mask(lengths, 5))[0]
        q, k, v = (mha.split_heads(p(x), 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        keys = mha.padding_mask(lengths, 5)
        queries = keys.transpose(-2, -1)
        out = lambda attended: layer.o_proj(mha.merge_heads(attended[0]))
        classic = classic_attention(q, k, v, keys)
        nan_in_every_row = lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and bool(torch.isnan(got[1]).any(-1).all())
        hints = catalogued('ex09', 'q6', no_scale=out(classic['no_scale']), scale_by_d_model=out(classic_attention(q, k, v, keys, scale=1 / math.sqrt(8))['reference']), mask_discarded=out(classic['no_mask']), mask_on_queries=out(classic_attention(q, k, v, queries.expand(2, 1, 5, 5))['reference']), max_over_queries=nan_in_every_row, softmax_axis=out(classic['softmax_axis']), inverted_mask=out(classic['inverted_mask']))
        parts = SimpleNamespace(**{name: getattr(layer, name) for name in ('q_proj', 'k_proj', 'v_proj', 'o_proj', 'num_heads', 'head_dim')})
        got = call(padded_attention, 'padded_attention', x=x, parts=parts, lengths=lengths)
        check_tensor(got, expected, 'padded_attention(x [2, 5, 8], 2 heads, lengths [5, 3]) against the layer with mha.padding_mask', hints)

