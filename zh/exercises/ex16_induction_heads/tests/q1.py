from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_induction_scores(induction_scores):
    import torch
    from mha.course import induction
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.mistakes import hints as catalogued
    forbid(induction_scores, 'induction_scores', {'induction_score': 'write the score yourself.', 'head_scores': 'write the score yourself.'})
    tokens = torch.tensor([[9, 1, 2, 3, 9, 9, 9, 1, 2, 3, 9, 9], [4, 5, 6, 7, 8, 9, 4, 5, 6, 7, 8, 9]])
    batch = induction.CopyBatch(tokens, src=torch.tensor([1, 0]), dst=torch.tensor([7, 6]), length=torch.tensor([3, 5]))
    causal = torch.tril(torch.ones(12, 12, dtype=torch.bool))
    weights = torch.softmax(randn(2, 3, 12, 12, seed=161).masked_fill(~causal, float('-inf')), dim=-1)
    B, H, T = (2, 3, 12)

    def score(query_shift=0, key_shift=1, first=0, last=-1, pooled=False, transposed=False):
        w = weights.transpose(-2, -1) if transposed else weights
        rows = []
        for b in range(B):
            i = torch.arange(first, int(batch.length[b]) + last)
            rows.append(w[b, :, batch.dst[b] + i + query_shift, batch.src[b] + i + key_shift])
        if pooled:
            return torch.cat(rows, dim=-1).mean(dim=-1)
        return torch.stack([r.mean(dim=-1) for r in rows]).mean(dim=0)
    expected = induction.induction_score(weights, batch)
    hints = catalogued('ex16', 'q1', offset_zero=score(key_shift=0), offset_two=score(key_shift=2), query_late=score(query_shift=1, key_shift=2), first_query_left_out=score(first=1), last_query_added=score(last=0), pooled=score(pooled=True), transposed=score(transposed=True))
    got = call(induction_scores, 'induction_scores', weights=weights, batch=batch)
    check_tensor(got, expected, 'induction_scores for weights [2, 3, 12, 12] and copies of lengths 3 and 5', hints)

@test_case(points=None, hidden=False)
def test_induction_scores_of_pure_heads(induction_scores):
    import torch
    from mha.course import induction
    from mha.course.checks import call, check_tensor
    batch = induction.copy_batch(4, seq_len=20, vocab_size=10, min_len=3, max_len=6, generator=torch.Generator().manual_seed(162))
    B, T = batch.tokens.shape
    weights = torch.eye(T).expand(B, 3, T, T).clone()
    for b in range(B):
        for i in range(int(batch.length[b]) - 1):
            q = int(batch.dst[b]) + i
            weights[b, :2, q] = 0.0
            weights[b, 0, q, int(batch.src[b]) + i + 1] = 1.0
            weights[b, 1, q, int(batch.src[b]) + i] = 1.0
    got = call(induction_scores, 'induction_scores', weights=weights, batch=batch)
    check_tensor(got, torch.tensor([1.0, 0.0, 0.0]), 'induction_scores of an exact induction head (1), a head on the earlier occurrence itself (0) and a head on its own token (0)')

