from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_pre_ln(pre_ln):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    why = 'wire the residual connection and the norm yourself.'
    forbid(pre_ln, 'pre_ln', {name: why for name in ('mha.EncoderLayer', 'mha.DecoderLayer', 'mha.Block', 'TransformerEncoderLayer', 'TransformerDecoderLayer')})
    torch.manual_seed(0)
    sublayer, norm = (torch.nn.Linear(8, 8), mha.LayerNorm(8))
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
        x = randn(2, 5, 8, seed=23) * 2 + 1
        hints = [(norm(x + sublayer(x)), "that is Post-LN, which normalises after the residual sum; Pre-LN normalises the sub-layer's input and leaves the residual path untouched."), (sublayer(norm(x)), "the residual connection is missing: add x to the sub-layer's output."), (norm(x) + sublayer(norm(x)), 'the residual adds the un-normalised x.')]
        got = call(pre_ln, 'pre_ln', x=x, sublayer=sublayer, norm=norm)
        check_tensor(got, x + sublayer(norm(x)), 'pre_ln(x, sublayer, norm)', hints)

