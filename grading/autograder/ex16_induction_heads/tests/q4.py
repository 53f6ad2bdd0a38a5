from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_ablated_induction_scores(ablated_induction_scores, prediction, env):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed, call, check_tensor, note, reference
    from mha.course.mistakes import hints as catalogued
    if prediction is None:
        raise CheckFailed('prediction is None: set it to the letter of your choice, e.g. prediction = "a" (the hidden test checks it against the measurement).')
    if not isinstance(prediction, str) or prediction.strip().lower() not in ('a', 'b', 'c', 'd'):
        raise CheckFailed(f'prediction should be one of "a", "b", "c", "d"; got {prediction!r}.')
    model = induction.exercise_model()
    batch = induction.copy_batch(32, generator=torch.Generator().manual_seed(165))

    def scores(heads):
        with torch.no_grad(), induction.ablate_heads(model, heads):
            _, weights = model(batch.tokens, need_weights=True)
        return torch.stack([induction.induction_score(w, batch) for w in weights])
    for heads in ([(0, 1)], [(0, 3), (1, 0)]):
        with reference(env, induction_scores=induction.induction_score):
            got = call(ablated_induction_scores, 'ablated_induction_scores', model=model, batch=batch, heads=heads)
        check_tensor(got, scores(heads), f'ablated_induction_scores(model, batch of 32, heads={heads}) on the given model', catalogued('ex16', 'q4', weights_not_recomputed=scores([])), atol=0.0001)
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

@test_case(points=None, hidden=True)
def test_ablated_induction_scores_random_models(ablated_induction_scores, env):
    import torch
    from mha.course import induction
    from mha.course.checks import call, check_tensor, randn, random_sizes, reference
    for seed in range(2):
        H, half, V, P = random_sizes(1670 + seed, 4, 2, 6)
        layers, T, d_k = (2 + seed, 2 * (P + 3), 2 * half)
        with torch.random.fork_rng(devices=[]):
            model = induction.AttentionOnly(V + 4, H * d_k, H, layers, T).eval()
        with torch.no_grad():
            for number, (name, p) in enumerate(model.named_parameters()):
                if 'norm' not in name:
                    p.copy_(0.4 * randn(*p.shape, seed=100 * seed + number))
        batch = induction.copy_batch(8, seq_len=T, vocab_size=V + 4, min_len=2, max_len=P + 3, generator=torch.Generator().manual_seed(seed))
        heads = [(0, H - 1), (layers - 2, 0)]
        with torch.no_grad(), induction.ablate_heads(model, heads):
            _, weights = model(batch.tokens, need_weights=True)
        expected = torch.stack([induction.induction_score(w, batch) for w in weights])
        with reference(env, induction_scores=induction.induction_score):
            got = call(ablated_induction_scores, 'ablated_induction_scores', model=model, batch=batch, heads=heads)
        check_tensor(got, expected, f'ablated_induction_scores for a random {layers}-layer model of {H} heads of width {d_k}, heads={heads}', atol=0.0001)

@test_case(points=None, hidden=True)
def test_prediction(prediction):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed
    model = induction.exercise_model()
    batch = induction.copy_batch(64, generator=torch.Generator().manual_seed(16))
    scores = induction.head_scores(model, batch)
    previous = int(scores['previous_token'][0].argmax())
    with torch.no_grad(), induction.ablate_heads(model, [(0, previous)]):
        _, weights = model(batch.tokens, need_weights=True)
    before = scores['induction'][1].max().item()
    after = induction.induction_score(weights[1], batch).max().item()
    if abs(after - before) < 0.1:
        measured = 'a'
    elif after > before:
        measured = 'd'
    else:
        measured = 'b' if after < 0.15 else 'c'
    if not isinstance(prediction, str) or prediction.strip().lower() != measured:
        raise CheckFailed(f'prediction = {prediction!r} is not what the given model does: measure it with your ablated_induction_scores (the highest layer-1 score, with and without the previous-token head), then look at the previous-token scores of the other heads of layer 0.')

