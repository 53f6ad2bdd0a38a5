from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_tiled_attention(tiled_attention):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import classic_attention, hints as catalogued
    forbid(tiled_attention, 'tiled_attention', {'softmax': 'keep a running maximum, normaliser and output yourself.', 'cat': 'visit the blocks one at a time; never put them back together.', 'stack': 'visit the blocks one at a time.', 'scaled_dot_product_attention': 'write the tiled loop yourself.', 'logsumexp': 'keep a running maximum yourself.'})
    q, k, v = (randn(2, 3, 8, seed=21) * 10, randn(2, 10, 8, seed=22) * 10, randn(2, 10, 5, seed=23))
    expected = mha.scaled_dot_product_attention(q, k, v)[0]
    for size in (4, 10, 3):
        pairs = [(k[:, i:i + size], v[:, i:i + size]) for i in range(0, 10, size)]
        m = l = acc = l_ok = acc_stale = None
        for kb, vb in pairs:
            s = q @ kb.transpose(-2, -1) / math.sqrt(8)
            new_m = s.amax(-1) if m is None else torch.maximum(m, s.amax(-1))
            p = torch.exp(s - new_m[..., None])
            l, acc = (p.sum(-1), p @ vb) if l is None else (l + p.sum(-1), acc + p @ vb)
            l_ok = p.sum(-1) if l_ok is None else l_ok * torch.exp(m - new_m) + p.sum(-1)
            m = new_m
        got = call(tiled_attention, 'tiled_attention', q=q, kv_blocks=iter(pairs))
        hints = [(lambda o: bool(torch.isnan(o).any() | torch.isinf(o).any()), 'exp of large scores overflows: subtract the running maximum before exp.'), (acc / l[..., None], "when a block raises the maximum from m to m', both l and acc are stale: their terms were computed with the old maximum. Rescale both by the same factor.")]
        hints += catalogued('ex10', 'q2', acc_not_rescaled=acc / l_ok[..., None], no_scale=classic_attention(q, k, v)['no_scale'][0])
        check_tensor(got, expected, f'tiled_attention(q [2, 3, 8], keys/values [2, 10, .] in blocks of {size}) with scores of several hundred', hints, atol=0.0001)

