from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_merge_heads(merge_heads):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    forbid(merge_heads, 'merge_heads', {'mha.merge_heads': 'write the reshape yourself.'})
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)
    heads = mha.split_heads(x, 2).contiguous()
    hints = [(heads.reshape(2, 3, 8), 'you reshaped without moving the head axis back: transpose(1, 2) first, then reshape.')]
    errors = [('view size is not compatible', 'after transpose(1, 2) the tensor is not contiguous: use .reshape(...) instead of .view(...).')]
    got = call(merge_heads, 'merge_heads', x=heads, error_hints=errors)
    check_tensor(got, x, 'merge_heads(split_heads(x, 2)) for x = arange(48).view(2, 3, 8)', hints)

