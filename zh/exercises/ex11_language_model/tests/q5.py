from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_lm_loss_padded(lm_loss_padded):
    import torch
    import torch.nn.functional as F
    import mha
    from mha.course.checks import call, check_tensor, forbid
    from mha.course.mistakes import hints as catalogued
    forbid(lm_loss_padded, 'lm_loss_padded', {'loss': 'compute the cross-entropy of the real targets yourself.'})
    torch.manual_seed(0)
    model = mha.GPT(mha.GPTConfig.gpt2(20, 16, 16, 2, 2)).eval()
    tokens = torch.randint(0, 20, (3, 8), generator=torch.Generator().manual_seed(3))
    lengths = torch.tensor([8, 3, 5])
    with torch.no_grad():
        per_text = [model.loss(tokens[b:b + 1, :n]) * (n - 1) for b, n in enumerate(lengths.tolist())]
        expected = sum(per_text) / (lengths - 1).sum()
        mean_of_means = sum((s / (n - 1) for s, n in zip(per_text, lengths.tolist()))) / len(per_text)
        everything = F.cross_entropy(model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten())
        hints = catalogued('ex11', 'q5', mean_of_means=mean_of_means, padding_counted=everything)
        got = call(lm_loss_padded, 'lm_loss_padded', model=model, tokens=tokens, lengths=lengths)
        if isinstance(got, float):
            got = torch.tensor(got)
        check_tensor(got, expected, 'lm_loss_padded(model, tokens [3, 8], lengths [8, 3, 5])', hints)
        repadded = tokens.clone()
        repadded[1, 3:], repadded[2, 5:] = (7, 11)
        got = call(lm_loss_padded, 'lm_loss_padded', model=model, tokens=repadded, lengths=lengths)
        check_tensor(got if not isinstance(got, float) else torch.tensor(got), expected, 'lm_loss_padded for the same texts with other padding token ids')

