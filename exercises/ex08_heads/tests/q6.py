from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_uniform_causal_weights(uniform_causal_weights, predicted_entropy):
    import numbers
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_tensor, note
    L = 5
    expected = torch.softmax(torch.zeros(L, L).masked_fill(~mha.causal_mask(L), float('-inf')), dim=-1)
    hints = [(torch.full((L, L), 1.0 / L), 'the weights must respect the causal mask: query i sees keys 0..i only.'), (torch.ones(L, L).tril(), 'the weights of each query must sum to 1.')]
    check_tensor(call(uniform_causal_weights, 'uniform_causal_weights', L=L), expected, 'uniform_causal_weights(5)', hints)
    if not isinstance(predicted_entropy, numbers.Real) or isinstance(predicted_entropy, bool):
        raise CheckFailed('predicted_entropy is None or not a number: it must be your prediction, a number in nats (the grade compares it with the measurement).')
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

