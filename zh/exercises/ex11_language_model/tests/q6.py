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

