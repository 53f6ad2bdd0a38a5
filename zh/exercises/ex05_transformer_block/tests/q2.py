from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_post_ln(post_ln):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    why = 'wire the residual connection and the norm yourself.'
    forbid(post_ln, 'post_ln', {name: why for name in ('mha.EncoderLayer', 'mha.DecoderLayer', 'mha.Block', 'TransformerEncoderLayer', 'TransformerDecoderLayer')})
    torch.manual_seed(0)
    sublayer, norm = (torch.nn.Linear(8, 8), mha.LayerNorm(8))
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
        x = randn(2, 5, 8, seed=22) * 2 + 1
        hints = [(x + sublayer(norm(x)), "that is Pre-LN, which normalises the sub-layer's input; Post-LN normalises after the residual sum."), (norm(sublayer(x)), "the residual connection is missing: add x to the sub-layer's output before the norm."), (x + norm(sublayer(x)), "normalise the residual sum, not only the sub-layer's output.")]
        got = call(post_ln, 'post_ln', x=x, sublayer=sublayer, norm=norm)
        check_tensor(got, norm(x + sublayer(x)), 'post_ln(x, sublayer, norm)', hints)

