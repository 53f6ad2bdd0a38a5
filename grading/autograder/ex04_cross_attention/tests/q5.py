from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_packed_cross_mask(packed_cross_mask):
    import torch
    from mha.course.checks import call, check_tensor
    from mha.course.mistakes import hints

    def by_hand(query_doc, key_doc):
        B, L = query_doc.shape
        S = key_doc.shape[1]
        allowed = torch.zeros(B, 1, L, S, dtype=torch.bool)
        for b in range(B):
            for i in range(L):
                for j in range(S):
                    allowed[b, 0, i, j] = bool(query_doc[b, i] == key_doc[b, j] and key_doc[b, j] >= 0)
        return allowed
    query_doc = torch.tensor([[0, 0, 1, 1, 1, -1], [0, 1, 1, 2, -1, -1]])
    key_doc = torch.tensor([[0, 0, 0, 1, 1, 1, 1, -1, -1], [0, 0, 1, 2, 2, 2, -1, -1, -1]])
    expected = by_hand(query_doc, key_doc)
    padding_matches = (query_doc[:, :, None] == key_doc[:, None, :])[:, None]
    found = hints('ex04', 'q5', padding_matched=padding_matches, inverted_mask=~expected, transposed=lambda got: isinstance(got, torch.Tensor) and got.shape == (2, 1, 9, 6) and bool(torch.equal(got, expected.transpose(-2, -1))))
    got = call(packed_cross_mask, 'packed_cross_mask', query_doc=query_doc, key_doc=key_doc)
    check_tensor(got, expected, 'packed_cross_mask for query_doc [2, 6] and key_doc [2, 9] (pairs 0, 1, 2 and padding -1)', found)

@test_case(points=None, hidden=True)
def test_packed_cross_mask_random(packed_cross_mask):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    lengths = [random_sizes(1000 + seed, 2, 1, 5) for seed in range(3)]
    query_doc = torch.tensor([sum(([d] * t for d, (t, _) in enumerate(lengths)), []) + [-1]])
    key_doc = torch.tensor([sum(([d] * s for d, (_, s) in enumerate(lengths)), []) + [-1, -1]])
    L, S = (query_doc.shape[1], key_doc.shape[1])
    got = call(packed_cross_mask, 'packed_cross_mask', query_doc=query_doc, key_doc=key_doc)
    expected = ((query_doc[:, :, None] == key_doc[:, None, :]) & (key_doc[:, None, :] >= 0))[:, None]
    check_tensor(got, expected, f'packed_cross_mask for pairs of lengths {lengths} (target, source), L = {L}, S = {S}')
    torch.manual_seed(1003)
    layer = mha.MultiHeadAttention(8, 2)
    x, memory = (randn(1, L, 8, seed=1004), randn(1, S, 8, seed=1005))
    with torch.no_grad():
        packed = layer(x, memory, memory, mask=got)[0]
        t0 = s0 = 0
        for d, (t, s) in enumerate(lengths):
            alone = layer(x[:, t0:t0 + t], memory[:, s0:s0 + s], memory[:, s0:s0 + s])[0]
            check_tensor(packed[:, t0:t0 + t], alone, f'cross-attention of pair {d} in the packed row with your mask, against that pair alone')
            t0, s0 = (t0 + t, s0 + s)

