from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_outputs_changed(outputs_changed, prediction):
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, note, randn
    from mha.course.mistakes import hints
    x = randn(2, 3, 4, seed=80)
    changed = x.clone()
    changed[0, 0] += 1.0
    changed[1, 2] -= 1.0
    expected = torch.zeros(2, 3, dtype=torch.bool)
    expected[0, 0] = expected[1, 2] = True
    one_sign = lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and (int(got.sum()) == 1) and bool(got[expected].any())
    found = hints('ex06', 'q5', inverted=~expected, signed=one_sign)
    got = call(outputs_changed, 'outputs_changed', norm=lambda t: t, x=x, changed_x=changed)
    check_tensor(got, expected, 'outputs_changed(norm, x, changed_x) for norm = the identity, x [2, 3, 4], tokens [0, 0] and [1, 2] moved by +1 and -1', found)
    small = x.clone()
    small[1, 1, 2] += 1e-06
    got = call(outputs_changed, 'outputs_changed', norm=lambda t: t, x=x, changed_x=small)
    check_tensor(got, torch.zeros(2, 3, dtype=torch.bool), 'outputs_changed(norm, x, changed_x) for norm = the identity and one feature moved by 1e-6 (below the tolerance 1e-4)')
    if not isinstance(prediction, dict) or set(prediction) != {'layer_norm', 'batch_norm_train'}:
        raise CheckFailed("prediction must be the dict of the question, with the keys 'layer_norm' and 'batch_norm_train'.")
    for name, entries in prediction.items():
        if not isinstance(entries, dict) or set(entries) != {'token_shift', 'token_scale', 'feature_shift'} or (not all((isinstance(v, bool) for v in entries.values()))):
            raise CheckFailed(f"prediction['{name}'] must map 'token_shift', 'token_scale' and 'feature_shift' to True or False (the grade compares them with the measurement).")
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

