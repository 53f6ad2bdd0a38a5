from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_top_p(top_p_filter):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    forbid(top_p_filter, 'top_p_filter', {'top_p_logits': 'write the filter yourself.', 'sample_next': 'write the filter yourself.'})
    probs = torch.tensor([[0.05, 0.4, 0.1, 0.3, 0.15], [0.7, 0.1, 0.1, 0.05, 0.05]])
    logits = probs.log()
    for p in (0.5, 0.75, 0.6, 1.0):
        expected = mha.top_p_logits(logits, p)
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        strict = sorted_probs.cumsum(-1) > p
        strict = strict.scatter(-1, order, strict)
        hints = [(logits.masked_fill(strict, float('-inf')), 'the token whose probability makes the sum reach p belongs to the set too: your set stops one token short of p.'), (lambda got: bool(torch.isinf(got).all(dim=-1).any()), 'a row lost every token: the most probable one is always kept.')]
        got = call(top_p_filter, 'top_p_filter', logits=logits, p=p)
        check_tensor(got, expected, f'top_p_filter(log of probabilities [[0.05, 0.4, 0.1, 0.3, 0.15], [0.7, 0.1, 0.1, 0.05, 0.05]], p={p})', hints)

@test_case(points=None, hidden=True)
def test_top_p_random(top_p_filter):
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed, p in enumerate([0.3, 0.9, 0.05]):
        B, T, V = random_sizes(4700 + seed, 3, 1, 12)
        logits = randn(B, T, V + 2, seed=seed) * 2
        check_tensor(call(top_p_filter, 'top_p_filter', logits=logits, p=p), mha.top_p_logits(logits, p), f'top_p_filter(logits {list(logits.shape)}, p={p})')

