"""Exercise 9's planted bugs (mha.course.planted_bugs) and the grader's unseen mutants
(grading/unseen_bugs.py): the correct attention against mha's, each bug against the formula
it claims to compute, written out here."""
import math
import sys
from pathlib import Path

import pytest
import torch

import mha
from mha.course.planted_bugs import BUGS, attention_with_bug

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grading.unseen_bugs import UNSEEN_BUGS, attention_with_unseen_bug  # noqa: E402

# L, S, d_k, d_v all different; the mask blocks every key of the last query
# (their own generator: the global random state at import depends on what xdist collected first)
_generator = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(2, 3, 4, generator=_generator), torch.randn(2, 5, 4, generator=_generator),
           torch.randn(2, 5, 6, generator=_generator))
MASK = mha.causal_mask(3, 5) & torch.tensor([[True], [True], [False]])


def softmax_rows(scores, mask=None):
    """softmax over the keys, blocked keys (mask False) get 0, rows with none left are 0."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


@pytest.mark.parametrize("einsum", [False, True])
@pytest.mark.parametrize("mask", [None, MASK], ids=["no mask", "mask"])
def test_the_attention_without_a_bug_is_mhas(einsum, mask):
    out, weights = attention_with_bug(None, einsum=einsum)(q, k, v, mask)
    ref_out, ref_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(out, ref_out)


@pytest.mark.parametrize("einsum", [False, True])
def test_each_shown_bug_computes_what_its_name_says(einsum):
    scores = q @ k.transpose(-2, -1)
    expected = {
        "floor_division": softmax_rows(scores // 2.0, MASK),                       # sqrt(d_k) = 2
        "softmax_axis": torch.softmax((scores / 2).masked_fill(~MASK, float("-inf")), dim=-2).nan_to_num(0.0),
        "mask_polarity": softmax_rows(scores / 2, ~MASK),
    }
    assert set(expected) == set(BUGS)
    for bug, weights in expected.items():
        out, got = attention_with_bug(bug, einsum=einsum)(q, k, v, MASK)
        torch.testing.assert_close(got, weights, msg=bug)
        torch.testing.assert_close(out, weights @ v, msg=bug)


def test_each_unseen_mutant_computes_what_its_name_says():
    scores = q @ k.transpose(-2, -1)
    correct = softmax_rows(scores / 2, MASK)
    expected = {
        "sqrt_S": (softmax_rows(scores / math.sqrt(5), MASK), v),
        "no_scaling": (softmax_rows(scores, MASK), v),
        "mask_ignored": (softmax_rows(scores / 2), v),
        "values_from_keys": (correct, k),
    }
    assert set(expected) == set(UNSEEN_BUGS) - set(EDGE_CASE_MUTANTS)
    for bug, (weights, averaged) in expected.items():
        out, got = attention_with_unseen_bug(bug)(q, k, v, MASK)
        torch.testing.assert_close(got, weights, msg=bug)
        torch.testing.assert_close(out, weights @ averaged, msg=bug)
        right = correct @ v                                              # a real bug on these inputs:
        assert out.shape != right.shape or not torch.allclose(out, right), bug


# mutants that are right on ordinary inputs and wrong only on one case a test must try
EDGE_CASE_MUTANTS = {
    "nan_when_blocked": (q, k, v, MASK),                   # the last query has no key left
    "overflow": (1000 * q, k, v, MASK),                    # scores far beyond exp's range (88)
    "one_query": (q[:, :1], k, v, None),                   # L = 1
}


@pytest.mark.parametrize("bug", sorted(EDGE_CASE_MUTANTS))
def test_each_edge_case_mutant_is_right_on_ordinary_inputs_and_wrong_on_its_case(bug):
    correct = attention_with_bug(None)
    ordinary = (q, k, v, mha.causal_mask(3, 5))           # every query keeps a key; small scores
    for got, want in zip(attention_with_unseen_bug(bug)(*ordinary), correct(*ordinary)):
        torch.testing.assert_close(got, want)
    case = EDGE_CASE_MUTANTS[bug]
    got, want = attention_with_unseen_bug(bug)(*case)[0], correct(*case)[0]
    assert not torch.allclose(got.nan_to_num(12345.0), want), bug


def test_an_unknown_bug_is_refused():
    with pytest.raises(ValueError, match="unknown bug 'typo'"):
        attention_with_bug("typo")
    with pytest.raises(ValueError, match="unknown mutant 'floor_division'"):
        attention_with_unseen_bug("floor_division")
