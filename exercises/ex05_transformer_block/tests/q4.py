from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_encoder_layer(encoder_layer, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    from mha.course.mistakes import hints as catalogued
    why = 'wire the two sub-layers yourself with your post_ln.'
    forbid(encoder_layer, 'encoder_layer', {name: why for name in ('mha.EncoderLayer', 'mha.DecoderLayer', 'mha.Block', 'TransformerEncoderLayer', 'TransformerDecoderLayer')})
    torch.manual_seed(0)
    layer = mha.EncoderLayer(8, 2, 16)
    self_attn = lambda t, m: layer.self_attn(t, mask=m)[0]
    x = randn(2, 5, 8, seed=24)
    mask = mha.padding_mask(torch.tensor([5, 3]), 5)
    with torch.no_grad():
        h = layer.norm1(x + self_attn(x, mask))
        h0 = layer.norm1(x + self_attn(x, mask)[0])
        hints = catalogued('ex05', 'q4', first_sequence=layer.norm2(h0 + layer.ff(h0))) + [(layer.norm2(x + layer.ff(h)), "the second residual adds h, the output of the first sub-layer, not the layer's input x."), (layer.norm2(h + layer.ff(x)), 'the feed-forward network takes h, the output of the attention sub-layer.'), (layer.norm2(layer.norm1(x + self_attn(x, None)) + layer.ff(layer.norm1(x + self_attn(x, None)))), 'the mask never reaches the attention: the block must hand it to its self-attention.')]
        with reference(env, post_ln=lambda t, f, n: n(t + f(t))):
            got = call(encoder_layer, 'encoder_layer', x=x, self_attn=self_attn, ffn=layer.ff, norm1=layer.norm1, norm2=layer.norm2, mask=mask)
        check_tensor(got, layer(x, mask)[0], 'encoder_layer(x, ...) with a padding mask, against mha.EncoderLayer', hints)

