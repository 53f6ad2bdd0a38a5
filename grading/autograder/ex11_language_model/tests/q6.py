from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_commutes_with_temperature(commutes_with_temperature, prediction):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_equal, note, randn
    logits = randn(2, 10, seed=96) * 2
    cases = [('the identity filter (keeps everything)', lambda z: z, True), ('a filter that adds 1 to every logit', lambda z: z + 1.0, False), ('top_k_logits(z, 3)', lambda z: mha.top_k_logits(z, 3), True), ('top_p_logits(z, 0.8)', lambda z: mha.top_p_logits(z, 0.8), False)]
    for name, filter_fn, expected in cases:
        got = call(commutes_with_temperature, 'commutes_with_temperature', filter_fn=filter_fn, logits=logits, temperature=0.5)
        check_equal(got, expected, f'commutes_with_temperature({name}, logits [2, 10], temperature=0.5)')
    if not isinstance(prediction, dict) or set(prediction) != {'top_k', 'top_p', 'min_p'} or (not all((isinstance(v, bool) for v in prediction.values()))):
        raise CheckFailed("prediction is None or incomplete: it must be the dict of the question, with the keys 'top_k', 'top_p' and 'min_p', each True or False (the grade compares them with the measurement).")
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

@test_case(points=None, hidden=True)
def test_prediction_and_measurement(commutes_with_temperature, prediction):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_equal, randn, random_sizes
    B, V = random_sizes(5000, 2, 3, 12)
    logits = randn(B, V + 6, seed=97) * 3

    def min_p(z, p_base=0.2):
        probs = torch.softmax(z.double(), dim=-1)
        return z.masked_fill(probs < p_base * probs.amax(-1, keepdim=True), float('-inf'))
    filters = {'top_k': lambda z: mha.top_k_logits(z, 4), 'top_p': lambda z: mha.top_p_logits(z, 0.7), 'min_p': min_p}
    for temperature in (0.5, 2.0):
        for name, filter_fn in filters.items():
            first, last = (filter_fn(logits / temperature), filter_fn(logits) / temperature)
            truth = bool(torch.equal(first.isinf(), last.isinf()) and torch.allclose(first.nan_to_num(0.0, 0.0, 0.0), last.nan_to_num(0.0, 0.0, 0.0), atol=1e-05))
            got = call(commutes_with_temperature, 'commutes_with_temperature', filter_fn=filter_fn, logits=logits, temperature=temperature)
            check_equal(got, truth, f'commutes_with_temperature({name}, logits {list(logits.shape)}, temperature={temperature})')
    truth = {'top_k': True, 'top_p': False, 'min_p': False}
    for name, expected in truth.items():
        guess = prediction.get(name) if isinstance(prediction, dict) else None
        if guess is not expected:
            raise CheckFailed(f"prediction['{name}'] = {guess!r} disagrees with the measurement. Ask what dividing by T does to the order of the logits, and what it does to the probabilities each filter compares.")

