from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_chunked_cross_entropy(chunked_cross_entropy):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import hints as catalogued
    why = 'keep a running maximum and sum, one block at a time.'
    forbid(chunked_cross_entropy, 'chunked_cross_entropy', {'cat': why, 'stack': why, 'logsumexp': why, 'softmax': why, 'log_softmax': why, 'cross_entropy': why, 'nll_loss': why})
    logits = randn(5, 10, seed=104) * 40 + 60
    targets = torch.tensor([0, 3, 5, 9, 6])

    def pieces(x, size):
        return [x[:, s:s + size] for s in range(0, x.shape[-1], size)]
    expected = F.cross_entropy(logits.double(), targets, reduction='none')
    picked = logits.double().gather(-1, targets[:, None])[:, 0]
    running, stale = (None, None)
    for block in pieces(logits.double(), 3):
        running = block.amax(-1) if running is None else torch.maximum(running, block.amax(-1))
        part = torch.exp(block - running[:, None]).sum(-1)
        stale = part if stale is None else stale + part
    hints = catalogued('ex10', 'q4', overflow=lambda o: bool(torch.isinf(o).any() | torch.isnan(o).any()), stale_sum=running + stale.log() - picked, sign=-expected)
    got = call(chunked_cross_entropy, 'chunked_cross_entropy', logit_blocks=iter(pieces(logits, 3)), targets=targets)
    check_tensor(got, expected.float(), 'chunked_cross_entropy(blocks of 3 of logits [5, 10] ~ 60 + 40 x N(0, 1), targets [0, 3, 5, 9, 6])', hints, atol=0.0001)

