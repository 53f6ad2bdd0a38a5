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

