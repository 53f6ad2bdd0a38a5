"""sinusoidal_positions against the formula of the paper, element by element."""
import math

import pytest
import torch

from mha import sinusoidal_positions


@pytest.mark.parametrize("L, d", [(1, 2), (7, 4), (50, 16), (3, 128)])
def test_entries_follow_the_sine_cosine_formula(L, d):
    pe = sinusoidal_positions(L, d)
    assert pe.shape == (L, d)
    for p in range(L):
        for i in range(d // 2):
            angle = p / 10000 ** (2 * i / d)
            assert pe[p, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-5)
            assert pe[p, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-5)


def test_positions_are_distinct():
    pe = sinusoidal_positions(64, 32)
    assert torch.cdist(pe, pe).add(torch.eye(64)).min() > 0.1


def test_error_for_odd_width():
    with pytest.raises(ValueError, match="even d > 0.*d=7"):
        sinusoidal_positions(4, 7)
