from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_online_softmax(online_softmax_stats):
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, check_tuple, forbid, randn
    forbid(online_softmax_stats, 'online_softmax_stats', {'softmax': 'keep a running maximum and normaliser yourself.', 'logsumexp': 'keep a running maximum and normaliser yourself.', 'cat': 'visit the blocks one at a time; never put them back together.', 'stack': 'visit the blocks one at a time; never put them back together.'})
    scores = randn(3, 10, seed=11) * 30
    m_ref = scores.amax(dim=-1)
    l_ref = torch.exp(scores - m_ref[:, None]).sum(dim=-1)
    for size in (4, 10, 1):
        parts = [scores[:, i:i + size] for i in range(0, 10, size)]
        got = call(online_softmax_stats, 'online_softmax_stats', score_blocks=iter(parts))
        m, l = check_tuple(got, f'online_softmax_stats for scores [3, 10] in blocks of {size}', ('m', 'l'))
        if m is None or l is None:
            raise CheckFailed('online_softmax_stats returned None for m and l: replace the `pass` of the stub with the update of m and l.')
        check_tensor(m, m_ref, f'the maximum m for scores [3, 10] in blocks of {size}')
        no_rescale = sum((torch.exp(p - torch.stack([q.amax(-1) for q in parts[:i + 1]]).amax(0)[:, None]).sum(-1) for i, p in enumerate(parts)))
        hints = [(no_rescale, "when a block raises the maximum from m to m', the l you had is stale: its terms were computed with the old maximum. By what factor must it be rescaled?"), (lambda x: bool(torch.isinf(x).any() | torch.isnan(x).any()), 'exp of a score of a few hundred overflows: subtract the running maximum before exp.')]
        check_tensor(l, l_ref, f'the normaliser l for scores [3, 10] (entries up to ~90) in blocks of {size}', hints, rtol=0.0001)

@test_case(points=None, hidden=True)
def test_online_softmax_random(online_softmax_stats):
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, randn, random_sizes
    for seed in range(3):
        B, H, S, size = random_sizes(3300 + seed, 4, 1, 12)
        scores = randn(B, H, S, seed=seed) * (20 + 40 * seed)
        m_ref = scores.amax(dim=-1)
        l_ref = torch.exp(scores - m_ref[..., None]).sum(dim=-1)
        parts = [scores[..., i:i + size] for i in range(0, S, size)]
        m, l = check_tuple(call(online_softmax_stats, 'online_softmax_stats', score_blocks=iter(parts)), 'online_softmax_stats', ('m', 'l'))
        check_tensor(m, m_ref, f'm for scores {list(scores.shape)} in blocks of {size}')
        check_tensor(l, l_ref, f'l for scores {list(scores.shape)} in blocks of {size}', rtol=0.0001)

