"""ALiBi biases against the paper's slopes and its definition, worked by hand."""
import math

import pytest
import torch

import mha
from mha import alibi_bias, alibi_slopes


def test_slopes_for_eight_heads_are_the_papers_half_to_one_over_256():
    expected = torch.tensor([1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256])
    torch.testing.assert_close(alibi_slopes(8), expected)


def test_slopes_for_a_power_of_two_start_at_two_to_minus_eight_over_h():
    torch.testing.assert_close(alibi_slopes(16)[:2], torch.tensor([2 ** -0.5, 2 ** -1.0]))
    torch.testing.assert_close(alibi_slopes(1), torch.tensor([1 / 256]))


def test_slopes_for_six_heads_append_two_in_between_slopes_after_the_four_head_ones():
    # 4 heads: 1/4, 1/16, 1/64, 1/256; the 2 extra heads take every other 8-head slope: 1/2, 1/8
    expected = torch.tensor([1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8])
    torch.testing.assert_close(alibi_slopes(6), expected)


def papers_get_slopes(n):
    """The ALiBi paper's reference code (ofirpress/attention_with_linear_biases, get_slopes),
    copied as written: the extra heads' slopes are *appended* after the power of two's."""
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + papers_get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


@pytest.mark.parametrize("num_heads", range(1, 33))
def test_slopes_equal_the_papers_reference_code(num_heads):
    torch.testing.assert_close(alibi_slopes(num_heads),
                               torch.tensor(papers_get_slopes(num_heads), dtype=torch.float32))


def test_slopes_for_twelve_heads_are_distinct_and_between_zero_and_one():
    slopes = alibi_slopes(12)
    assert slopes.shape == (12,) and len(set(slopes.tolist())) == 12
    assert (slopes > 0).all() and (slopes < 1).all()
    torch.testing.assert_close(slopes[8:], torch.tensor([2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5]))


def test_bias_is_bottom_right_aligned_by_hand():
    # 2 queries at the end of 4 keys: query 0 sits at position 2, query 1 at position 3
    slope = alibi_slopes(1).item()
    expected = slope * torch.tensor([[[-2.0, -1.0, 0.0, 1.0],
                                      [-3.0, -2.0, -1.0, 0.0]]])
    torch.testing.assert_close(alibi_bias(1, 2, 4), expected)


def test_bias_equals_its_definition_for_every_head():
    H, L, S = 3, 4, 7
    bias, slopes = alibi_bias(H, L, S), alibi_slopes(H)
    for h in range(H):
        for i in range(L):
            for j in range(S):
                assert bias[h, i, j].item() == pytest.approx(-slopes[h].item() * (S - L + i - j))


def test_cached_decoding_step_bias_is_the_last_row_of_the_full_bias():
    full = alibi_bias(4, 9, 9)
    torch.testing.assert_close(alibi_bias(4, 1, 9), full[:, -1:, :])
    torch.testing.assert_close(alibi_bias(4, 3, 9), full[:, -3:, :])


def test_bias_is_zero_on_the_diagonal_of_causal_positions_and_negative_before():
    bias = alibi_bias(2, 5, 5)
    allowed = mha.causal_mask(5)
    assert (bias.diagonal(dim1=1, dim2=2) == 0).all()
    assert (bias[:, allowed & ~torch.eye(5, dtype=torch.bool)] < 0).all()


def test_bias_is_float_with_shape_h_l_s():
    bias = alibi_bias(5, 3, 8)
    assert bias.shape == (5, 3, 8) and bias.dtype == torch.float32


@pytest.mark.parametrize("args", [(0, 2, 2), (2, 3, 2), (2, -1, 2)])
def test_bias_rejects_bad_sizes(args):
    with pytest.raises(ValueError):
        alibi_bias(*args)
