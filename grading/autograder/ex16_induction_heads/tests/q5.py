from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_shifted_circuit(shifted_lag, shifted_offset, shifted_heads, joint_cost):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed, check_tensor, note
    from mha.course.mistakes import hints as catalogued
    for name, value in (('shifted_lag', shifted_lag), ('shifted_offset', shifted_offset)):
        if value is None:
            raise CheckFailed(f'{name} is None: set it to a distance, an int from 1 to 16.')
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, int) or (not 1 <= value <= 16):
            raise CheckFailed(f'{name} should be a distance, an int from 1 to 16; got {value!r}.')
    if shifted_heads is None:
        raise CheckFailed("shifted_heads is None: set it to the list of (layer, head) pairs of the circuit's heads in layer 1.")
    if isinstance(shifted_heads, torch.Tensor):
        shifted_heads = shifted_heads.tolist()
    if not isinstance(shifted_heads, (list, tuple)) or not all((isinstance(h, (list, tuple)) and len(h) == 2 for h in shifted_heads)):
        raise CheckFailed(f'shifted_heads should be a list of (layer, head) pairs; got {shifted_heads!r}.')
    heads = [(int(layer), int(head)) for layer, head in shifted_heads]
    if any((layer != 1 or not 0 <= head < 4 for layer, head in heads)):
        raise CheckFailed(f'shifted_heads = {heads} should name heads of layer 1, (1, 0) to (1, 3): the heads whose offset score is above 0.5.')
    if joint_cost is None:
        raise CheckFailed('joint_cost is None: set it to the increase of the copy loss when the heads of shifted_heads are removed together.')
    shifted = induction.exercise_model('shifted')
    batch = induction.copy_batch(64, generator=torch.Generator().manual_seed(16))
    base = induction.evaluate(shifted, batch)
    expected = torch.tensor(induction.evaluate(shifted, batch, heads) - base)
    alone = torch.tensor(sum((induction.evaluate(shifted, batch, [h]) - base for h in heads)))
    got = torch.as_tensor(joint_cost, dtype=torch.float32).reshape(())
    check_tensor(got, expected, f'joint_cost, the increase of the copy loss of `shifted` on `batch` when the heads {heads} are removed together', catalogued('ex16', 'q5', summed_alone=alone, loss_not_increase=expected + base), atol=0.001)
    note('shifted_lag, shifted_offset and shifted_heads are not checked here: their format is accepted, and whether they are right is graded by your instructor (a hidden test compares them with the measurement).')

@test_case(points=None, hidden=True)
def test_shifted_circuit_measured(shifted_lag, shifted_offset, shifted_heads):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed, check_equal
    shifted = induction.exercise_model('shifted')
    batch = induction.copy_batch(64, generator=torch.Generator().manual_seed(16))
    with torch.no_grad():
        _, weights = shifted(batch.tokens, need_weights=True)
    lags = induction.lag_scan(weights[0], range(1, 17))
    offsets = induction.offset_scan(weights[1], batch, range(1, 17))
    lag, offset = (int(lags.max(dim=1).values.argmax()) + 1, int(offsets.max(dim=1).values.argmax()) + 1)
    got_lag, got_offset = (int(shifted_lag), int(shifted_offset))
    row = "that is a row number of the scan, not a distance: the scan's rows follow the distances you passed, and the distances start at 1."
    check_equal(got_lag == lag, True, 'whether shifted_lag is the lag of the highest lag score of layer 0 (lag_scan over the lags 1 to 16 of the layer-0 weights of `shifted` on `batch`)', [(lambda _: got_lag == lag - 1, row)])
    check_equal(got_offset == offset, True, 'whether shifted_offset is the offset of the highest offset score of layer 1 (offset_scan over the offsets 1 to 16 of the layer-1 weights of `shifted` on `batch`)', [(lambda _: got_offset == offset - 1, row)])
    expected = {(1, h) for h in range(shifted.num_heads) if offsets[offset - 1, h] > 0.5}
    heads = shifted_heads.tolist() if isinstance(shifted_heads, torch.Tensor) else shifted_heads
    got = {(int(layer), int(head)) for layer, head in heads}
    if got != expected:
        raise CheckFailed(f'shifted_heads = {sorted(got)} are not the heads of layer 1 whose offset score at shifted_offset is above 0.5: read the row of your offset scan that holds shifted_offset (layer-1 weights of `shifted`, on `batch`), one entry per head.')

