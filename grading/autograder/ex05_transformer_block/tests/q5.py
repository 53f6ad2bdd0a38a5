from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_positional_encoding(positional_encoding):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    from mha.course.mistakes import hints as catalogued
    forbid(positional_encoding, 'positional_encoding', {'sinusoidal_positions': 'build the table with torch.sin and torch.cos.'})
    expected = mha.sinusoidal_positions(6, 8)
    position, i = (torch.arange(6.0)[:, None], torch.arange(0, 8, 2))
    swapped = torch.zeros(6, 8)
    swapped[:, 0::2], swapped[:, 1::2] = (torch.cos(position / 10000 ** (i / 8)), torch.sin(position / 10000 ** (i / 8)))
    half = torch.zeros(6, 8)
    half[:, 0::2], half[:, 1::2] = (torch.sin(position / 10000 ** (i / 2 / 8)), torch.cos(position / 10000 ** (i / 2 / 8)))
    angle = position / 10000 ** (i / 8)
    doubled = torch.zeros(6, 8)
    doubled[:, 0::2], doubled[:, 1::2] = (torch.sin(position / 10000 ** (2 * i / 8)), torch.cos(position / 10000 ** (2 * i / 8)))
    hints = [(swapped, 'sin goes in the even columns (0, 2, ...), cos in the odd ones.'), (half, 'the exponent is 2i / d where 2i is the even column index; you used i / d.')]
    hints += catalogued('ex05', 'q5', concatenated=torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1), exponent_doubled=doubled)
    got = call(positional_encoding, 'positional_encoding', L=6, d=8)
    check_tensor(got, expected, 'positional_encoding(6, 8)', hints)

@test_case(points=None, hidden=True)
def test_positional_encoding_random(positional_encoding):
    import mha
    from mha.course.checks import call, check_tensor, random_sizes
    for seed in range(2):
        L, half = random_sizes(1900 + seed, 2, 1, 40)
        check_tensor(call(positional_encoding, 'positional_encoding', L=L, d=2 * half), mha.sinusoidal_positions(L, 2 * half), f'positional_encoding({L}, {2 * half})')

