from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_merge_partials(merge_partials):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_tensor, check_tuple, randn

    def partial(q, k, v, mask):
        """One worker: output normalised over its keys, and the log of its normaliser."""
        scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float('-inf'))
        return (mha.scaled_dot_product_attention(q, k, v, mask)[0], torch.logsumexp(scores, dim=-1))
    q, k, v = (randn(2, 4, 8, seed=31), randn(2, 9, 8, seed=32), randn(2, 9, 3, seed=33))
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[1, :5] = False
    mask[2] = False
    out_a, lse_a = partial(q, k[:, :5], v[:, :5], mask[:, :5])
    out_b, lse_b = partial(q, k[:, 5:], v[:, 5:], mask[:, 5:])
    expected_out, expected_lse = partial(q, k, v, mask)
    hints = [(lambda o: bool(torch.isnan(o).any()), 'a query with no key in a part (lse = -inf), or in both, must not produce nan: -inf - (-inf) is nan.'), ((out_a + out_b) / 2, "the two parts do not weigh the same: each part's output counts in proportion to the share of the total probability mass that its keys hold.")]
    out, lse = check_tuple(call(merge_partials, 'merge_partials', out_a=out_a, lse_a=lse_a, out_b=out_b, lse_b=lse_b), 'merge_partials(...) for keys split 5 + 4', ('out', 'lse'))
    check_tensor(lse, expected_lse, 'the merged log-normaliser lse (query 2 has no key: -inf)', [(torch.maximum(lse_a, lse_b), "log(e^a + e^b) is not max(a, b): two parts' log-sum-exps combine like the logarithms of two sums.")])
    check_tensor(out, expected_out, 'the merged output for keys split 5 + 4 (query 1: none of A; query 2: no key)', hints)

