"""Answers that game a check instead of solving the question get no points (issue 21); fast.

Each runs the exercise's real test file (public and hidden cases, ``run_test_file``) against a
notebook namespace holding the cheat, as the grader does, without a sandbox: the cheats below do
not need one (their state lives in the learner's own functions).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # grading.unseen_bugs
from mha.course.checks import check_equal, run_test_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EX09 = ROOT / "grading" / "autograder" / "ex09_debugging" / "tests"


def _inputs():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 4, generator=g) for _ in range(3))
    return q, k, v, torch.tril(torch.ones(5, 5, dtype=torch.bool))


def oracle_of_the_first_call():
    """A 'test' that knows no attention: the first implementation it is given is its oracle."""
    seen = []

    def test_attention(attention):
        if not seen:
            seen.append(attention)
        q, k, v, mask = _inputs()
        out, weights = attention(q, k, v, mask)
        ref_out, ref_weights = seen[0](q, k, v, mask)
        assert torch.allclose(out, ref_out) and torch.allclose(weights, ref_weights)
    return test_attention


def honest_test(attention):
    """Compares with a trusted reference, on the cases a test must try (a query whose keys are
    all blocked, large scores, a single query): catches every mutant, passes every correct one."""
    from mha import scaled_dot_product_attention

    q, k, v, mask = _inputs()
    blocked = mask.clone()
    blocked[2] = False
    cases = [(q, k, v, None), (q, k, v, mask), (q, k, v, blocked), (40 * q, 40 * k, v, mask),
             (q[:, :1], k, v, None)]
    for case in cases:
        out, weights = attention(*case)
        ref_out, ref_weights = scaled_dot_product_attention(*case)
        assert out.shape == ref_out.shape and weights.shape == ref_weights.shape
        assert torch.allclose(out, ref_out, atol=1e-5)
        assert torch.allclose(weights, ref_weights, atol=1e-5)


def weak_test_without(case: str):
    """``honest_test`` without one of the cases it must try."""
    def test_attention(attention):
        from mha import scaled_dot_product_attention

        q, k, v, mask = _inputs()
        blocked = mask.clone()
        blocked[2] = False
        cases = {"a fully blocked query": (q, k, v, blocked),
                 "large scores": (40 * q, 40 * k, v, mask), "L = 1": (q[:, :1], k, v, None)}
        cases.pop(case)
        for inputs in [(q, k, v, None), (q, k, v, mask), *cases.values()]:
            out, weights = attention(*inputs)
            ref_out, ref_weights = scaled_dot_product_attention(*inputs)
            assert torch.allclose(out, ref_out, atol=1e-5)
            assert torch.allclose(weights, ref_weights, atol=1e-5)
    return test_attention


def test_a_test_that_takes_its_first_implementation_as_oracle_gets_no_points():
    for _ in range(5):  # the order is random: it must never pay
        test, cases = run_test_file(EX09 / "q5.py", {"test_attention": oracle_of_the_first_call()})
        assert test.score == 0, [c.message for c in cases]
    assert any(why in c.message for c in cases for why in (
        "passes on", "fails on a correct attention", "depends on what it was given"))


def test_an_honest_test_still_gets_full_points():
    test, cases = run_test_file(EX09 / "q5.py", {"test_attention": honest_test})
    assert test.score == test.possible > 0, [c.message for c in cases]


@pytest.mark.parametrize("case", ["a fully blocked query", "large scores", "L = 1"])
def test_a_test_that_never_tries_a_case_that_matters_gets_no_points(case):
    test, cases = run_test_file(EX09 / "q5.py", {"test_attention": weak_test_without(case)})
    assert test.score == 0, [c.message for c in cases]


def test_an_attention_that_gives_nan_for_a_fully_blocked_query_gets_no_points():
    from grading.unseen_bugs import attention_with_unseen_bug

    nan_when_blocked = attention_with_unseen_bug("nan_when_blocked")
    test, cases = run_test_file(EX09 / "q1.py", {"attention": nan_when_blocked})
    assert test.score == 0, [c.message for c in cases]
    assert any("not nan" in c.message for c in cases if not c.passed)


def test_a_numpy_integer_is_the_number_it_holds():
    check_equal(np.int64(6), 6, "count")
    check_equal(np.float64(0.5), 0.5, "ratio")


def test_tamper_notes_see_through_renames_and_dynamic_lookups():
    from grading.worker import tamper_markers

    evasions = [
        "from mha.course import checks as c\nc.check_tensor = lambda *a, **k: None",
        'import importlib\nm = importlib.import_module("mha.course." + "chec" + "ks")',
        'import mha\nx = getattr(getattr(mha, "course"), "".join(["che", "cks"]))',
        'import sys\nsys.modules["mha.course.che" + "cks"].call = print',
    ]
    for source in evasions:
        assert tamper_markers(source), source
    honest = ["def attention(q, k, v):\n    w = getattr(torch, 'softmax')(q @ k.T, -1)\n"
              "    return w @ v", "import torch\nx = torch.ones(3)"]
    for source in honest:
        assert tamper_markers(source) == [], source
