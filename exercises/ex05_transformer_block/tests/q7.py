from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_band_mask_and_reach(band_mask, reach, prediction):
    import torch
    from mha.course.checks import CheckFailed, call, check_equal, check_tensor, note, randn
    from mha.course.mistakes import hints
    i = torch.arange(7)
    distance = (i[:, None] - i[None, :]).abs()
    found = hints('ex05', 'q7', inverted=distance > 2, strict=distance < 2)
    check_tensor(call(band_mask, 'band_mask', L=7, w=2), distance <= 2, 'band_mask(7, 2)', found)
    x = randn(2, 6, 4, seed=75)
    mix = lambda h: h + 0.5 * h.roll(1, dims=1) - 0.25 * h.roll(-1, dims=1)
    expected = torch.zeros(2, 6, dtype=torch.bool)
    expected[:, 1:4] = True
    found = hints('ex05', 'q7', one_row=lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape and bool(got[0].equal(expected[0])) and (not bool(got[1].any())))
    given = x.clone()
    check_tensor(call(reach, 'reach', model=mix, x=x, position=2), expected, 'reach(model, x [2, 6, 4], position=2) for a model whose output t mixes the inputs t - 1, t and t + 1', found)
    check_equal(bool(x.equal(given)), True, "whether reach(model, x, position=2) leaves the caller's x as it was", hints('ex05', 'q7', in_place=False))
    shrink = lambda h: h - h.mean(dim=-1, keepdim=True)
    check_tensor(call(reach, 'reach', model=shrink, x=x, position=4), torch.zeros(2, 6, dtype=torch.bool), "reach for a model that subtracts each token's mean (the change is invisible to it)")
    if not isinstance(prediction, dict) or set(prediction) != {1, 3} or (not all((isinstance(n, int) and (not isinstance(n, bool)) for n in prediction.values()))):
        raise CheckFailed('prediction must map 1 and 3 to whole numbers of outputs (the grade compares them with the measurement).')
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

