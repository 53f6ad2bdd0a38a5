from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_packed_causal_mask(packed_causal_mask):
    import torch
    from mha.course.checks import call, check_tensor, forbid

    def brute_force(doc_ids):
        B, L = doc_ids.shape
        mask = torch.zeros(B, 1, L, L, dtype=torch.bool)
        for b in range(B):
            for i in range(L):
                for j in range(i + 1):
                    mask[b, 0, i, j] = bool(doc_ids[b, i] == doc_ids[b, j])
        return mask
    forbid(packed_causal_mask, 'packed_causal_mask', {'mha.causal_mask': 'build the mask yourself.', 'mha.padding_mask': 'build the mask yourself.'})
    doc_ids = torch.tensor([[0, 0, 0, 1, 1, 2], [0, 1, 1, 1, 1, 1]])
    expected = brute_force(doc_ids)
    L = 6
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    same = doc_ids[:, None, :, None] == doc_ids[:, None, None, :]
    hints = [(causal.expand(2, 1, L, L), "tokens see the earlier tokens of OTHER documents too: a key must also belong to the query's document."), (same, 'a token sees the later tokens of its document: the mask must be causal as well.'), (lambda m: list(m.shape) == [2, L, L], 'add the head axis: [B, 1, L, L] broadcasts over the heads.'), (~expected, "your mask is inverted: True must mean 'may attend'.")]
    got = call(packed_causal_mask, 'packed_causal_mask', doc_ids=doc_ids)
    check_tensor(got, expected, 'packed_causal_mask([[0, 0, 0, 1, 1, 2], [0, 1, 1, 1, 1, 1]])', hints)

