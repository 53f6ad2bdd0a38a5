from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_top_k(top_k_filter):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    forbid(top_k_filter, 'top_k_filter', {'top_k_logits': 'write the filter yourself.', 'sample_next': 'write the filter yourself.'})
    logits = randn(2, 10, seed=91) * 2
    for k in (3, 1, 10, 15):
        expected = mha.top_k_logits(logits, k)
        kth_small = logits.topk(min(k, 10), dim=-1, largest=False).values[..., -1:]
        hints = [(logits.masked_fill(logits > kth_small, float('-inf')), 'keep the LARGEST logits, not the smallest.'), (logits.masked_fill(logits < logits.topk(min(k, 10), dim=-1).values[..., -1:], 0.0), "set the removed logits to float('-inf'), not 0: exp(0) = 1 is still a real probability.")]
        got = call(top_k_filter, 'top_k_filter', logits=logits, k=k, error_hints=[('out of range', 'k may exceed the vocabulary V: then every token is kept.')])
        check_tensor(got, expected, f'top_k_filter(logits [2, 10], k={k})', hints)
    tied = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0]])
    check_tensor(call(top_k_filter, 'top_k_filter', logits=tied, k=2), mha.top_k_logits(tied, 2), 'top_k_filter([[1, 3, 3, 2, 3]], k=2): the ties with the 2nd largest are kept')

@test_case(points=None, hidden=True)
def test_top_k_random(top_k_filter):
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, T, V, k = random_sizes(4600 + seed, 4, 1, 12)
        logits = randn(B, T, V + 3, seed=seed) * 3
        check_tensor(call(top_k_filter, 'top_k_filter', logits=logits, k=k), mha.top_k_logits(logits, k), f'top_k_filter(logits {list(logits.shape)}, k={k})')

