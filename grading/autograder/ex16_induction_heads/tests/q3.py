from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_circuit(previous_token_head, induction_head, ablation_costs, costly_heads):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed, check_tensor, note
    measured = induction.measure_exercise_model(64, seed=16)

    def pair(name, value):
        if value is None:
            raise CheckFailed(f'{name} is None: set it to a (layer, head) pair.')
        if isinstance(value, torch.Tensor):
            value = value.tolist()
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise CheckFailed(f'{name} should be a (layer, head) pair; got {value!r}.')
        return (int(value[0]), int(value[1]))
    got = pair('previous_token_head', previous_token_head)
    if got != (0, int(measured.scores['previous_token'][0].argmax())):
        raise CheckFailed(f'previous_token_head = {got} is not the previous-token head: ' + ('it is in layer 0, where it prepares in each position what layer 1 looks for.' if got[0] != 0 else 'take the head of layer 0 with the highest previous-token score on `batch`.'))
    got = pair('induction_head', induction_head)
    if got != (1, int(measured.scores['induction'][1].argmax())):
        raise CheckFailed(f'induction_head = {got} is not the induction head: ' + ('it is in layer 1, where it can use what layer 0 wrote.' if got[0] != 1 else 'take the head of layer 1 with the highest induction score on `batch`.'))
    if ablation_costs is None:
        raise CheckFailed('ablation_costs is None: set it to the [2, 4] tensor of loss increases.')
    expected, base = (measured.ablation, measured.loss)
    got = torch.as_tensor(ablation_costs, dtype=torch.float32)
    check_tensor(got, expected, 'ablation_costs, the increase of the copy loss when each head alone is removed', [(expected + base, 'those are the losses without each head: the question asks for their increase over the loss of the whole model.'), (expected.T, 'one row per layer, one column per head: yours are transposed.')], atol=0.001)
    if costly_heads is None:
        raise CheckFailed('costly_heads is None: set it to the list of (layer, head) pairs whose removal alone costs more than 0.3 nats.')
    if isinstance(costly_heads, torch.Tensor):
        costly_heads = costly_heads.tolist()
    if not isinstance(costly_heads, (list, tuple, set)):
        raise CheckFailed(f'costly_heads should be a list of (layer, head) pairs; got {costly_heads!r}.')
    heads = [pair('an entry of costly_heads', h) for h in costly_heads]
    if any((not (0 <= layer < 2 and 0 <= head < 4) for layer, head in heads)):
        raise CheckFailed(f'costly_heads = {heads} names a head the model does not have: layers 0 and 1, heads 0 to 3.')
    note('costly_heads is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

@test_case(points=None, hidden=True)
def test_circuit_on_more_sequences(previous_token_head, induction_head):
    from mha.course import induction
    from mha.course.checks import check_equal
    measured = induction.measure_exercise_model(256, seed=164)
    scores, table = (measured.scores, measured.ablation)
    check_equal(tuple((int(x) for x in previous_token_head)), (0, int(scores['previous_token'][0].argmax())), 'previous_token_head, by score on 256 other sequences')
    check_equal(tuple((int(x) for x in induction_head)), (1, int(scores['induction'][1].argmax())), 'induction_head, by score on 256 other sequences')
    check_equal(tuple((int(x) for x in previous_token_head)), (0, int(table[0].argmax())), 'previous_token_head, the costliest head of layer 0 on 256 other sequences')

@test_case(points=None, hidden=True)
def test_costly_heads(costly_heads):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed
    table = induction.measure_exercise_model(64, seed=16).ablation
    expected = {(layer, head) for layer, head in (table > 0.3).nonzero().tolist()}
    heads = costly_heads.tolist() if isinstance(costly_heads, torch.Tensor) else costly_heads
    got = {(int(layer), int(head)) for layer, head in heads}
    if got != expected:
        raise CheckFailed(f'costly_heads = {sorted(got)} are not the heads whose removal alone costs more than 0.3 nats on `batch`: read every entry of your ablation_costs (one row per layer, one column per head), not only those of the heads the scores named.')

