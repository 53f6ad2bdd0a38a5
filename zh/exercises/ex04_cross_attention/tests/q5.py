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

