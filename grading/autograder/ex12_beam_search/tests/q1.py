from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_beam_step(beam_step):
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, forbid, randn
    from mha.course.mistakes import hints as catalogued
    forbid(beam_step, 'beam_step', {'references.beam_step': 'write the search yourself.'})
    sums = torch.tensor([[-1.0, -2.5, -0.5], [-0.2, float('-inf'), float('-inf')]])
    log_probs = randn(2, 3, 4, seed=101).log_softmax(dim=-1)
    totals = sums[:, :, None] + log_probs
    expected = []
    for b in range(2):
        ranked = sorted(((float(totals[b, k, t]), k, t) for k in range(3) for t in range(4)), reverse=True)[:3]
        expected.append(ranked)
    exp_sums = torch.tensor([[s for s, _, _ in row] for row in expected])
    exp_parents = torch.tensor([[k for _, k, _ in row] for row in expected])
    exp_tokens = torch.tensor([[t for _, _, t in row] for row in expected])
    result = call(beam_step, 'beam_step', sums=sums, log_probs=log_probs, beam_size=3)
    new_sums, parents, tokens = check_tuple(result, 'beam_step(sums [2, 3], log_probs [2, 3, 4], beam_size=3)', ('new_sums', 'parents', 'tokens'))
    hints = [(log_probs.reshape(2, 12).topk(3, dim=-1).values, "rank the extensions by their TOTAL log-probability: the hypothesis's sum plus the token's log-probability.")]
    check_tensor(new_sums, exp_sums, 'new_sums (the totals of the 3 best extensions, best first; row 1 has one live hypothesis)', hints)
    flat = exp_parents * 4 + exp_tokens
    check_tensor(parents, exp_parents, 'parents (which hypothesis each extends)', [(lambda p: bool((p == exp_tokens).all()), 'the flat index k * V + t packs the parent beam k and the token t together: undo that packing with integer arithmetic.')] + catalogued('ex12', 'q1', packed_by_k=flat % 3))
    check_tensor(tokens, exp_tokens, 'tokens (the token each adds)', [(lambda t: bool((t == exp_parents).all()), 'the flat index k * V + t packs the parent beam k and the token t together: undo that packing with integer arithmetic.')])

@test_case(points=None, hidden=True)
def test_beam_step_random(beam_step):
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, randn, random_sizes
    for seed in range(3):
        B, K, V = random_sizes(5100 + seed, 3, 1, 6)
        V += 2
        beam = min(K * V, 1 + seed + K // 2)
        sums, log_probs = (randn(B, K, seed=seed) - 3, randn(B, K, V, seed=seed + 1).log_softmax(dim=-1))
        totals = (sums[:, :, None] + log_probs).reshape(B, K * V)
        top, index = totals.sort(dim=-1, descending=True)
        new_sums, parents, tokens = check_tuple(call(beam_step, 'beam_step', sums=sums, log_probs=log_probs, beam_size=beam), 'beam_step', ('new_sums', 'parents', 'tokens'))
        check_tensor(new_sums, top[:, :beam], f'new_sums for B = {B}, K = {K}, V = {V}, beam_size = {beam}')
        check_tensor(parents, index[:, :beam] // V, f'parents for B = {B}, K = {K}, V = {V}, beam_size = {beam}')
        check_tensor(tokens, index[:, :beam] % V, f'tokens for B = {B}, K = {K}, V = {V}, beam_size = {beam}')

