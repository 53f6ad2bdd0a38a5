from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_split_heads(split_heads):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    forbid(split_heads, 'split_heads', {'mha.split_heads': 'write the reshape yourself.'})
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)
    expected = mha.split_heads(x, 2)
    hints = [(x.view(2, 2, 3, 4), 'you reshaped straight to [B, H, L, d], which cuts the sequence into pieces. Reshape to [B, L, H, d], then transpose(1, 2).'), (x.view(2, 3, 4, 2).permute(0, 3, 1, 2), 'head h got every H-th column (h, h+H, ...); it must get one contiguous block of d columns. In which order must the reshape list the head axis and the feature axis?')]
    errors = [('tuple of ints', 'a shape must be whole numbers: true division gives a float, even when it divides exactly. Which division gives an int?')]
    got = call(split_heads, 'split_heads', x=x, num_heads=2, error_hints=errors)
    check_tensor(got, expected, 'split_heads(x, 2) for x = arange(48).view(2, 3, 8)', hints)
    x = torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(0))
    got = call(split_heads, 'split_heads', x=x, num_heads=4)
    check_tensor(got, mha.split_heads(x, 4), 'split_heads(x, 4) against mha.split_heads')

@test_case(points=None, hidden=True)
def test_split_heads_random_shapes(split_heads):
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    for seed in range(3):
        B, L, H, d = random_sizes(500 + seed, 4)
        x = randn(B, L, H * d, seed=seed)
        got = call(split_heads, 'split_heads', x=x, num_heads=H)
        check_tensor(got, mha.split_heads(x, H), f'split_heads(x, {H}) for x {list(x.shape)}')

