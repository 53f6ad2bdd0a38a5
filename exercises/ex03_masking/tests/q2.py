from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_padding_mask(padding_mask):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    forbid(padding_mask, 'padding_mask', {'mha.padding_mask': 'compare torch.arange(S) with the lengths yourself.'})
    lengths = torch.tensor([3, 5, 1])
    expected = mha.padding_mask(lengths, 5)
    positions = torch.arange(5)
    hints = [((positions[None, :] <= lengths[:, None])[:, None, None, :], 'off by one: key j is a real token when j < length (positions start at 0).'), (~expected, 'your mask is inverted: True must mark the real tokens (may attend), False the padding.'), (lambda m: list(m.shape) == [3, 5], 'add the two singleton axes, mask[:, None, None, :], so that it broadcasts over heads and queries.')]
    got = call(padding_mask, 'padding_mask', lengths=lengths, S=5)
    check_tensor(got, expected, 'padding_mask(torch.tensor([3, 5, 1]), 5)', hints)

