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

@test_case(points=None, hidden=True)
def test_prediction_and_measurement(outputs_changed, prediction):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import CheckFailed, call, check_tensor, randn, random_sizes
    B, L, D = random_sizes(2300, 3, 2, 7)
    x = randn(B, L, D, seed=81) * 2 + 1
    rms = lambda t: t / t.pow(2).mean(-1, keepdim=True).add(1e-06).sqrt()
    moved = x.clone()
    moved[B - 1, L - 1] *= -2
    moved[0, 0, 0] -= 3
    reference = (rms(moved) - rms(x)).abs().amax(-1) > 0.0001
    check_tensor(call(outputs_changed, 'outputs_changed', norm=rms, x=x, changed_x=moved), reference, f'outputs_changed for an RMSNorm and x {list(x.shape)}')
    norms = {'layer_norm': lambda t: F.layer_norm(t, (D,)), 'batch_norm_train': lambda t: F.batch_norm(t.reshape(-1, D), None, None, training=True).view(t.shape)}
    changes = {'token_shift': x.clone(), 'token_scale': x.clone(), 'feature_shift': x + torch.arange(float(D))}
    changes['token_shift'][0, 0] += 5
    changes['token_scale'][0, 0] *= 3
    for name, norm in norms.items():
        for change, changed in changes.items():
            unchanged = not bool(((norm(changed) - norm(x)).abs().amax(-1) > 0.0001).any())
            guess = prediction.get(name, {}).get(change) if isinstance(prediction, dict) and isinstance(prediction.get(name), dict) else None
            if guess is not unchanged:
                raise CheckFailed(f"prediction['{name}']['{change}'] = {guess!r} disagrees with the measurement. Ask which statistics the change moves: those of one token (over its features), or those of one feature (over the batch).")

