from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_count_parameters(count_parameters):
    import mha
    from mha.course.checks import call, check_equal, forbid
    why = 'count them with a formula: do not build a layer to count its parameters.'
    forbid(count_parameters, 'count_parameters', {name: why for name in ('mha.MultiHeadAttention', 'MultiheadAttention', 'Module.parameters', 'Module.named_parameters', 'Tensor.numel')})
    for d_model, heads in [(8, 2), (8, 4), (512, 8)]:
        expected = sum((p.numel() for p in mha.MultiHeadAttention(d_model, heads).parameters()))
        one_head = call(count_parameters, 'count_parameters', d_model=d_model, num_heads=1)
        hints = [(lambda n: n != one_head, f'your count changes with the number of heads (count_parameters({d_model}, 1) = {one_head}): the heads split the D columns of the same four D x D projections, they add no parameters.'), (4 * d_model * d_model, 'count the biases too: each nn.Linear(D, D) has D * D weights and D biases.')]
        got = call(count_parameters, 'count_parameters', d_model=d_model, num_heads=heads)
        check_equal(got, expected, f'count_parameters({d_model}, {heads})', hints)

