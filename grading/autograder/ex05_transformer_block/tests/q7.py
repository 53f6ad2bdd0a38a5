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

@test_case(points=None, hidden=True)
def test_band_mask_and_reach_random(band_mask, reach, prediction):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_equal, check_tensor, randn, random_sizes
    from mha.course.mistakes import hints
    L, w = random_sizes(1900, 2, 3, 12)
    i = torch.arange(L)
    mask = (i[:, None] - i[None, :]).abs() <= w
    check_tensor(call(band_mask, 'band_mask', L=L, w=w), mask, f'band_mask({L}, {w})')
    torch.manual_seed(1901)
    layer = mha.EncoderLayer(8, 2, 16).eval()
    causal = mha.causal_mask(L)
    x = randn(2, L, 8, seed=1902)
    position = L // 2
    with torch.no_grad():
        model = lambda h: layer(h, causal)[0]
        moved = x.clone()
        moved[:, position] += 1.0
        expected = (model(moved) - model(x)).abs().amax(-1) > 1e-06
        given = x.clone()
        check_tensor(call(reach, 'reach', model=model, x=x, position=position), expected, f'reach for an encoder layer with a causal mask, x {list(x.shape)}, position {position}')
        changed = getattr(reach, 'changed_in_place', lambda: [])()
        kept = bool(x.equal(given)) and 1 not in changed
        check_equal(kept, True, f"whether reach(model, x, position={position}) leaves the caller's x as it was", hints('ex05', 'q7', in_place=False))
        torch.manual_seed(1903)
        stack = [mha.EncoderLayer(8, 2, 16).eval() for _ in range(3)]
        tokens = randn(1, 10, 8, seed=1904)
        local = (torch.arange(10)[:, None] - torch.arange(10)[None, :]).abs() <= 1
        for n in (1, 3):
            h, moved = (tokens, tokens.clone())
            moved[:, 2] += 1.0
            for layer in stack[:n]:
                h, moved = (layer(h, local)[0], layer(moved, local)[0])
            count = int(((moved - h).abs().amax(-1) > 1e-06).sum())
            guess = prediction.get(n) if isinstance(prediction, dict) else None
            if guess != count:
                raise CheckFailed(f'prediction[{n}] = {guess!r} disagrees with the measurement. Follow the change one layer at a time: which outputs can see position 2 after one layer, and which can see those?')

