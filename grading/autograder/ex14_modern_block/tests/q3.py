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

@test_case(points=None, hidden=True)
def test_modern_block_random(modern_block, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes, reference
    from mha.course.references import rms_norm as reference_rms, swiglu as reference_swiglu
    for seed in range(2):
        B, L, H, d = random_sizes(4300 + seed, 4, 1, 5)
        D = H * d
        torch.manual_seed(seed)
        layer = mha.MultiHeadAttention(D, H, bias=False).eval()

        def attention(h):
            with torch.no_grad():
                return layer(h, mask=mha.causal_mask(h.shape[1]))[0]
        x, w1, w2 = (randn(B, L, D, seed=seed), randn(D, seed=seed + 1), randn(D, seed=seed + 2))
        W_gate, W_up, W_down = (randn(D, 2 * D, seed=seed + 3), randn(D, 2 * D, seed=seed + 4), randn(2 * D, D, seed=seed + 5) / D)
        h = x + attention(reference_rms(x, w1, 1e-05))
        expected = h + reference_swiglu(reference_rms(h, w2, 1e-05), W_gate, W_up, W_down)
        with reference(env, rms_norm=reference_rms, swiglu=reference_swiglu):
            got = call(modern_block, 'modern_block', x=x, attention=attention, norm1_weight=w1, norm2_weight=w2, W_gate=W_gate, W_up=W_up, W_down=W_down, eps=1e-05)
        check_tensor(got, expected, f'modern_block for x {list(x.shape)}, {H} heads, eps 1e-5', atol=0.0001)

