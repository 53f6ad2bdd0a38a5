from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_block(Block, env):
    import torch
    import torch.nn.functional as F
    from mha.course import capstone
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    forbid(Block.forward, 'Block.forward', {'GPT': 'write the block yourself.', 'TransformerEncoderLayer': 'write the block yourself.', 'TransformerDecoderLayer': 'write the block yourself.', 'super': "write the block's forward yourself, not with the forward of a parent class."})
    D, H, D_FF = (16, 4, 40)
    torch.manual_seed(3)
    ref = capstone.Block(D, H, D_FF).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(torch.randn(p.shape) * 0.3)
    with reference(env, CausalSelfAttention=capstone.CausalSelfAttention):
        block = call(Block, 'Block', d_model=D, num_heads=H, d_ff=D_FF)
        call(block.load_state_dict, 'load_state_dict', ref.state_dict(), error_hints=[('key', 'keep the given __init__s: norm1, attn, norm2, mlp.fc, mlp.proj.')])
        x = randn(2, 5, D, seed=154) * 2
        with torch.no_grad():
            expected = ref(x)
            attn = lambda h: ref.attn(h, mask=torch.ones(h.shape[1], h.shape[1], dtype=torch.bool).tril())[0]
            mlp_with = lambda h, act: ref.mlp.proj(act(ref.mlp.fc(h)))
            tanh, exact = (lambda z: F.gelu(z, approximate='tanh'), F.gelu)
            h = x + attn(ref.norm1(x))
            post = ref.norm1(x + attn(x))
            hints = [(h + mlp_with(ref.norm2(h), exact), 'use GELU\'s tanh approximation, F.gelu(z, approximate="tanh"), as GPT-2 (and mha.MLP) do.'), (h + mlp_with(ref.norm2(h), torch.relu), "GPT-2's MLP uses GELU (tanh approximation), not ReLU."), (ref.norm2(post + mlp_with(post, tanh)), "that is the post-LN block of the original Transformer: GPT-2 normalises each sub-layer's INPUT and keeps the residual path free."), (h + mlp_with(ref.norm2(x), tanh), "the MLP's norm takes the stream AFTER the attention's residual, not x."), (mlp_with(ref.norm2(h), tanh), "keep the residual: add the MLP's output to the stream."), (attn(ref.norm1(x)) + mlp_with(ref.norm2(attn(ref.norm1(x))), tanh), "keep the residual: add the attention's output to x.")]
            got = call(block, 'Block(16, 4, 40)', x=x)
    check_tensor(got, expected, 'Block(16, 4, d_ff=40) on x [2, 5, 16], weights copied from the reference', hints, atol=0.0001)

