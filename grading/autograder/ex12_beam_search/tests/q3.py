from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_greedy_trap(greedy_trap):
    import torch
    from mha.course.checks import CheckFailed, call, check_tuple
    result = call(greedy_trap, 'greedy_trap')
    first, second = check_tuple(result, 'greedy_trap()', ('first', 'second'))
    if not (isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)):
        raise CheckFailed('greedy_trap() should return two tensors, first [V] and second [V, V].')
    first, second = (first.double(), second.double())
    V = first.shape[0] if first.dim() == 1 else 0
    if V < 2 or tuple(second.shape) != (V, V):
        raise CheckFailed(f'greedy_trap(): first must be [V] with V >= 2 and second [V, V]; got {list(first.shape)} and {list(second.shape)}.')
    if (first < 0).any() or (second < 0).any() or (not torch.allclose(first.sum(), torch.tensor(1.0, dtype=torch.float64), atol=1e-06)) or (not torch.allclose(second.sum(-1), torch.ones(V, dtype=torch.float64), atol=1e-06)):
        raise CheckFailed('greedy_trap(): first and every row of second must be probability distributions (entries >= 0, summing to 1).')
    pairs = first[:, None] * second
    best = divmod(int(pairs.argmax()), V)
    greedy_first = int(first.argmax())
    if best[0] == greedy_first or pairs.max() <= pairs[greedy_first].max() + 1e-09:
        raise CheckFailed(f'greedy_trap(): greedy takes token {greedy_first} first, and the most probable pair {best} starts with it too (probability {float(pairs.max()):.3f}). Hint: greedy judges the first token on its own; what could make a first token look best now and poor once the second token counts?')

@test_case(points=None, hidden=True)
def test_greedy_trap_with_beam_two(greedy_trap):
    import torch
    from mha.course.checks import CheckFailed, call, check_tuple
    first, second = check_tuple(call(greedy_trap, 'greedy_trap'), 'greedy_trap()', ('first', 'second'))
    first, second = (torch.as_tensor(first).double(), torch.as_tensor(second).double())
    V = first.shape[0]
    a = int(first.argmax())
    greedy_probability = float(first[a] * second[a].max())
    best_probability = max((float(first[i] * second[i, j]) for i in range(V) for j in range(V)))
    if not greedy_probability < best_probability - 1e-09:
        raise CheckFailed(f'greedy_trap(): greedy decoding reaches probability {greedy_probability:.3f}, the best pair {best_probability:.3f}: greedy must do worse.')

