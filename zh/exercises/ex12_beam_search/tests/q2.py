from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_beam_search(beam_search, env):
    import itertools
    import torch
    from mha.course.checks import CheckFailed, call, check_equal, check_tensor, check_tuple, forbid, reference

    def exhaustive(next_log_probs, length, V):
        """The reference: every sequence of `length` tokens, the most probable one."""
        best = (float('-inf'), None)
        for seq in itertools.product(range(V), repeat=length):
            total = 0.0
            for t in range(length):
                total += float(next_log_probs(torch.tensor([seq[:t]], dtype=torch.long).reshape(1, t))[0, seq[t]])
            best = max(best, (total, list(seq)))
        return best

    def reference_beam(next_log_probs, length, K):
        hyps = [(0.0, [])]
        for _ in range(length):
            candidates = []
            for total, seq in hyps:
                lp = next_log_probs(torch.tensor([seq], dtype=torch.long).reshape(1, len(seq)))[0]
                candidates += [(total + float(lp[v]), seq + [v]) for v in range(lp.shape[0])]
            hyps = sorted(candidates, key=lambda c: c[0], reverse=True)[:K]
        return hyps[0]

    def beam_step_ref(sums, log_probs, beam_size):
        B, K, V = log_probs.shape
        new_sums, index = (sums[:, :, None] + log_probs).reshape(B, K * V).topk(beam_size, dim=-1)
        return (new_sums, index // V, index % V)
    forbid(beam_search, 'beam_search', {'mha.beam_search': 'write the search yourself.'})
    tables = torch.randn(3, 4, 4, generator=torch.Generator().manual_seed(7)).log_softmax(dim=-1)
    model = lambda prefixes: tables[prefixes.shape[1]][prefixes[:, -1] if prefixes.shape[1] else torch.zeros(prefixes.shape[0], dtype=torch.long)]
    for K in (1, 2, 64):
        expected_total, expected_seq = exhaustive(model, 3, 4) if K == 64 else reference_beam(model, 3, K)
        with reference(env, beam_step=beam_step_ref):
            result = call(beam_search, 'beam_search', next_log_probs=model, length=3, beam_size=K)
        tokens, total = check_tuple(result, f'beam_search(model, length=3, beam_size={K})', ('tokens', 'total'))
        what = f'beam_search(model, length=3, beam_size={K})' + (' (a beam this wide is exhaustive search)' if K == 64 else '')
        check_equal(list(map(int, tokens)) if tokens is not None else None, expected_seq, f'the tokens of {what}')
        check_tensor(torch.as_tensor(total, dtype=torch.float32).reshape(()), torch.tensor(expected_total), f'the total log-probability of {what}')

