from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_min_p(min_p_filter):
    import math
    import torch
    from mha.course.checks import call, check_tensor, randn

    def brute_force(logits, p_base):
        out = logits.clone()
        for row in range(logits.shape[0]):
            probs = [math.exp(x) for x in logits[row].tolist()]
            top = max(probs)
            for j, prob in enumerate(probs):
                if prob < p_base * top:
                    out[row, j] = float('-inf')
        return out
    logits = randn(3, 8, seed=95) * 2
    for p_base in (0.1, 0.5, 1.0):
        expected = brute_force(logits, p_base)
        probs = torch.softmax(logits, dim=-1)
        hints = [(logits.masked_fill(probs < p_base, float('-inf')), "the threshold is RELATIVE: p_base times the row's largest probability, not p_base itself."), (logits.masked_fill(logits < p_base * logits.amax(-1, keepdim=True), float('-inf')), 'compare probabilities (after the softmax), not logits.')]
        got = call(min_p_filter, 'min_p_filter', logits=logits, p_base=p_base)
        check_tensor(got, expected, f'min_p_filter(logits [3, 8], p_base={p_base})', hints)

