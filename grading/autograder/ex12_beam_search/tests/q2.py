from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_beam_search(beam_search, env):
    import torch
    from mha.course.checks import call, check_equal, check_tensor, check_tuple, forbid, reference
    from mha.course.mistakes import hints
    from mha.course.references import beam_step as beam_step_ref, exhaustive_search, list_beam_search, table_model
    why = 'write the search yourself.'
    forbid(beam_search, 'beam_search', {'mha.beam_search': why, 'list_beam_search': why, 'exhaustive_search': why})
    model = table_model(torch.randn(3, 4, 4, generator=torch.Generator().manual_seed(7)).log_softmax(dim=-1))
    for K in (1, 2, 64):
        expected_total, expected_seq = exhaustive_search(model, 3, 4) if K == 64 else list_beam_search(model, 3, K)
        with reference(env, beam_step=beam_step_ref):
            result = call(beam_search, 'beam_search', next_log_probs=model, length=3, beam_size=K)
        tokens, total = check_tuple(result, f'beam_search(model, length=3, beam_size={K})', ('tokens', 'total'))
        what = f'beam_search(model, length=3, beam_size={K})' + (' (a beam this wide is exhaustive search)' if K == 64 else '')
        check_equal(list(map(int, tokens)) if tokens is not None else None, expected_seq, f'the tokens of {what}')
        check_tensor(torch.as_tensor(total, dtype=torch.float32).reshape(()), torch.tensor(expected_total), f'the total log-probability of {what}')
    trap = table_model(torch.randn(3, 4, 4, generator=torch.Generator().manual_seed(3)).log_softmax(dim=-1))
    expected_total, expected_seq = list_beam_search(trap, 3, 2)
    greedy = list_beam_search(trap, 3, 1)[1]
    with reference(env, beam_step=beam_step_ref):
        result = call(beam_search, 'beam_search', next_log_probs=trap, length=3, beam_size=2)
    tokens, total = check_tuple(result, 'beam_search(a second model, length=3, beam_size=2)', ('tokens', 'total'))
    check_equal(list(map(int, tokens)) if tokens is not None else None, expected_seq, 'the tokens of beam_search(a second model, length=3, beam_size=2), where a beam of 2 finds a better sequence than greedy decoding', hints('ex12', 'q2', identical_start=greedy))

@test_case(points=None, hidden=True)
def test_beam_search_random(beam_search, env):
    import torch
    from mha.course.checks import call, check_equal, check_tensor, check_tuple, random_sizes, reference
    from mha.course.references import beam_step as beam_step_ref, list_beam_search, table_model
    for seed in range(2):
        V, length, K = random_sizes(5200 + seed, 3, 2, 5)
        model = table_model(torch.randn(length, V, V, generator=torch.Generator().manual_seed(seed)).log_softmax(dim=-1))
        expected_total, expected_seq = list_beam_search(model, length, K)
        with reference(env, beam_step=beam_step_ref):
            tokens, total = check_tuple(call(beam_search, 'beam_search', next_log_probs=model, length=length, beam_size=K), 'beam_search', ('tokens', 'total'))
        check_equal(list(map(int, tokens)), expected_seq, f'the tokens for V = {V}, length = {length}, beam_size = {K}')
        check_tensor(torch.as_tensor(total, dtype=torch.float32).reshape(()), torch.tensor(expected_total), f'the total for V = {V}, length = {length}, beam_size = {K}')

