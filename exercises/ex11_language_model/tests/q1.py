from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_lm_loss(lm_loss):
    import torch
    import torch.nn.functional as F
    import mha
    from mha.course.checks import call, check_tensor, forbid
    forbid(lm_loss, 'lm_loss', {'loss': 'compute the cross-entropy of the shifted targets yourself.'})
    torch.manual_seed(0)
    model = mha.GPT(mha.GPTConfig.gpt2(20, 16, 16, 2, 2)).eval()
    tokens = torch.randint(0, 20, (2, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = model.loss(tokens)
        full = model(tokens)
        hints = [(F.cross_entropy(full.flatten(0, 1), tokens.flatten()), 'position t must predict the NEXT token, t + 1: the inputs and the targets are the same sequence, shifted by one.'), (F.cross_entropy(full[:, 1:].flatten(0, 1), tokens[:, :-1].flatten()), 'the shift goes the other way: the logits at position t are compared with token t + 1.'), (F.cross_entropy(full[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction='sum'), 'the mean over the predicted tokens, not the sum.')]
        got = call(lm_loss, 'lm_loss', model=model, tokens=tokens)
    if isinstance(got, float):
        got = torch.tensor(got)
    check_tensor(got, expected, 'lm_loss(model, tokens [2, 9])', hints)

