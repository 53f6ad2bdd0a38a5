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

@test_case(points=None, hidden=True)
def test_padded_attention_random(padded_attention):
    from types import SimpleNamespace
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, L, H, d = random_sizes(3200 + seed, 4, 1, 6)
        B, L = (B + 1, L + 1)
        torch.manual_seed(seed)
        layer = mha.MultiHeadAttention(H * d, H).eval()
        x = randn(B, L, H * d, seed=seed) * (1 + 10 * seed)
        lengths = torch.tensor(random_sizes(3210 + seed, B, 1, L + 1))
        lengths[0] = L
        with torch.no_grad():
            expected = layer(x, mask=mha.padding_mask(lengths, L))[0]
            parts = SimpleNamespace(**{name: getattr(layer, name) for name in ('q_proj', 'k_proj', 'v_proj', 'o_proj', 'num_heads', 'head_dim')})
            check_tensor(call(padded_attention, 'padded_attention', x=x, parts=parts, lengths=lengths), expected, f'padded_attention for x {list(x.shape)}, {H} heads, lengths {lengths.tolist()}', atol=0.0001)

