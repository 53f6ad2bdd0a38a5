from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_modern_block(modern_block, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    why = 'wire the block yourself from your rms_norm and swiglu.'
    forbid(modern_block, 'modern_block', {name: why for name in ('mha.Block', 'mha.gpt', 'TransformerEncoderLayer', 'TransformerDecoderLayer')})
    from mha.course.references import rms_norm as reference_rms, swiglu as reference_swiglu
    torch.manual_seed(0)
    layer = mha.MultiHeadAttention(8, 2, bias=False).eval()

    def attention(h):
        with torch.no_grad():
            return layer(h, mask=mha.causal_mask(h.shape[1]))[0]
    x = randn(2, 5, 8, seed=77) * 2
    w1, w2 = (randn(8, seed=78), randn(8, seed=79))
    W_gate, W_up, W_down = (randn(8, 24, seed=80) / 8 ** 0.5, randn(8, 24, seed=81) / 8 ** 0.5, randn(24, 8, seed=82) / 24 ** 0.5)
    h = x + attention(reference_rms(x, w1))
    expected = h + reference_swiglu(reference_rms(h, w2), W_gate, W_up, W_down)
    post = reference_rms(x + attention(x), w1)
    hints = [(reference_rms(post + reference_swiglu(post, W_gate, W_up, W_down), w2), "that is the post-norm block of the original Transformer: normalise each sub-layer's INPUT, x + sublayer(rms(x))."), (h + reference_swiglu(reference_rms(x, w2), W_gate, W_up, W_down), 'the second norm takes h, the output of the attention step, not x.'), (x + attention(reference_rms(x, w1)) + reference_swiglu(reference_rms(x + attention(reference_rms(x, w1)), w2), W_gate, W_up, W_down) - x, "keep the residuals: each sub-layer's output is added to its input, for the attention and for the feed-forward network.")]
    with reference(env, rms_norm=reference_rms, swiglu=reference_swiglu):
        got = call(modern_block, 'modern_block', x=x, attention=attention, norm1_weight=w1, norm2_weight=w2, W_gate=W_gate, W_up=W_up, W_down=W_down)
    check_tensor(got, expected, 'modern_block(x [2, 5, 8], causal attention, ...)', hints, atol=0.0001)

