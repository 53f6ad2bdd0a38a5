from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_decoder_mask(decoder_mask, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, reference
    from mha.course.mistakes import hints as catalogued
    lengths = torch.tensor([4, 2])
    causal, padding = (mha.causal_mask(4), mha.padding_mask(lengths, 4))
    hints = catalogued('ex03', 'q4', inverted_mask=~(causal & padding)) + [(causal | padding, 'a key must be in the past AND a real token: combine the masks with &, not |.'), (lambda m: list(m.shape) in ([4, 4], [2, 1, 1, 4]), 'combine both masks; broadcasting [L, L] & [B, 1, 1, L] gives [B, 1, L, L].')]
    with reference(env, causal_mask=mha.causal_mask, padding_mask=mha.padding_mask):
        got = call(decoder_mask, 'decoder_mask', lengths=lengths, L=4)
    check_tensor(got, causal & padding, 'decoder_mask(torch.tensor([4, 2]), 4)', hints)

