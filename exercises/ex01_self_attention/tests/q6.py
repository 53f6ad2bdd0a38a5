from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_attention_limits(attention_limits, prediction):
    import torch
    from mha.course.checks import CheckFailed, call, check_pair, check_tensor, forbid, note, randn
    from mha.course.mistakes import hints
    forbid(attention_limits, 'attention_limits', {'softmax': 'compute the limits themselves, not the softmax at an extreme temperature.', 'Softmax': 'compute the limits themselves, not the softmax at an extreme temperature.', 'exp': 'compute the limits themselves, not the softmax at an extreme temperature.'})
    for L, S in ((4, 4), (3, 6)):
        q, k, v = (randn(2, L, 5, seed=61), randn(2, S, 5, seed=62), randn(2, S, 3, seed=63))
        scores = q.double() @ k.double().transpose(-2, -1) / 5 ** 0.5
        large = (torch.softmax(scores / 1000000000.0, dim=-1) @ v.double()).float()
        small = (torch.softmax(scores / 1e-09, dim=-1) @ v.double()).float()
        result = call(attention_limits, 'attention_limits', q=q, k=k, v=v)
        out_large, out_small = check_pair(result, 'attention_limits(q, k, v)', 'out_large_t', 'out_small_t')
        found = hints('ex01', 'q6', summed=v.sum(-2, keepdim=True).expand(2, L, 3), swapped_limits=small)
        check_tensor(out_large, large, f'the large-t limit for q [2, {L}, 5], k [2, {S}, 5], v [2, {S}, 3]', found)
        by_query = torch.softmax(scores / 1e-09, dim=-2).transpose(-2, -1)[..., :L, :]
        found = hints('ex01', 'q6', argmax_axis=(by_query @ v.double()).float() if L == S else None, swapped_limits=large)
        check_tensor(out_small, small, f'the small-t limit for q [2, {L}, 5], k [2, {S}, 5], v [2, {S}, 3]', [h for h in found if h[0] is not None])
    if not isinstance(prediction, dict) or set(prediction) != {'t_large', 't_small'} or (not all((p in ('a', 'b', 'c', 'd') for p in prediction.values()))):
        raise CheckFailed('prediction must map "t_large" and "t_small" to one of the letters "a", "b", "c", "d" (the grade compares them with the limits).')
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

