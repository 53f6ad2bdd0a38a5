"""Bans by behaviour (issue 20): what an answer may not use is decided by what it executes.

``forbid`` inside a test case (``run_test_file`` runs each in ``banning()``) makes every ``call`` of
the learner's code record the library functions it executes. These tests list the ways around a
ban by name that learners found (aliases, a name bound in another cell, ``getattr``, a helper in
another cell, the functional form of nn.MultiheadAttention), each of which must be refused, and
the learner's own code, which must be accepted whatever its helpers are called.
"""
from __future__ import annotations

import textwrap

import pytest
import torch

from mha.course.checks import CheckFailed, banning, call, forbid

SETUP = """
import torch
import torch.nn as nn
import torch.nn.functional as F
"""


def notebook(*cells: str) -> dict:
    """A notebook's namespace after running ``cells`` (its functions are the learner's)."""
    namespace = {"__name__": "__main__"}
    for index, cell in enumerate((SETUP, *cells)):
        exec(compile(textwrap.dedent(cell), f"<cell {index}>", "exec"), namespace)
    return namespace


def verdict(fn, banned: dict[str, str], *args):
    """None when the check accepts ``fn``, else its message."""
    try:
        with banning():
            forbid(fn, "answer", banned)
            call(fn, "answer", *args)
    except CheckFailed as exc:
        return str(exc)
    return None


X = torch.randn(2, 3, 4)
BLOCKS = [torch.randn(2, 4), torch.randn(3, 4)]

JOINING = {  # ban -> ways to put the blocks back together anyway
    "cat": ["torch.concat(blocks)", "torch.concatenate(blocks)", "torch.hstack([b.T for b in blocks])",
            "torch.vstack(blocks)", "torch.cat(blocks)"],
    "stack": ["torch.vstack([b[0] for b in blocks])", "torch.stack([b[0] for b in blocks])"],
}
SOFTMAX = ["torch.log_softmax(x, dim=-1).exp()", "nn.Softmax(dim=-1)(x)", "F.softmin(-x, dim=-1)",
           "x.softmax(-1)", "getattr(F, 'soft' + 'max')(x, dim=-1)"]


@pytest.mark.parametrize("ban,expression", [(ban, e) for ban, es in JOINING.items() for e in es])
def test_every_way_of_joining_the_blocks_is_refused(ban, expression):
    ns = notebook(f"def answer(blocks):\n    return {expression}\n")
    message = verdict(ns["answer"], {ban: "visit the blocks one at a time."}, BLOCKS)
    assert message is not None and f"uses `{ban}`" in message, message


@pytest.mark.parametrize("expression", SOFTMAX)
def test_every_library_softmax_is_refused(expression):
    ns = notebook(f"def answer(x):\n    return {expression}\n")
    message = verdict(ns["answer"], {"softmax": "write it with torch.exp, amax and sum."}, X)
    assert message is not None and "uses `softmax`" in message, message


SDPA = {
    "bound in another cell": ["sdpa = F.scaled_dot_product_attention",
                              "def answer(q):\n    return sdpa(q, q, q)\n"],
    "getattr": ["def answer(q):\n    return getattr(F, 'scaled_dot_' + 'product_attention')(q, q, q)\n"],
    "a helper in another cell": ["def helper(q):\n    return F.scaled_dot_product_attention(q, q, q)\n",
                                 "def answer(q):\n    return helper(q)\n"],
    "the functional multi-head attention": [
        "w = torch.randn(12, 4); b = torch.zeros(12); wo = torch.randn(4, 4)\n"
        "def answer(q):\n"
        "    q = q.transpose(0, 1)\n"
        "    return F.multi_head_attention_forward(q, q, q, 4, 2, w, b, None, None, False, 0.0, wo, None,\n"
        "                                          need_weights=False)[0]\n"],
}


@pytest.mark.parametrize("way", sorted(SDPA))
def test_the_built_in_attention_is_refused_however_it_is_reached(way):
    ns = notebook(*SDPA[way])
    message = verdict(ns["answer"], {"scaled_dot_product_attention": "compute the attention yourself."}, X)
    assert message is not None and "uses `scaled_dot_product_attention`" in message, message


def test_a_wrapper_of_the_courses_reference_is_refused_whatever_its_name():
    """Issue 21 item 10: the question's reference (what its check compares with) is banned in
    the question's ``forbid``; a learner's function that only calls it, under any name, is not
    an answer (tests/test_grading_bans.py: the same in the grader)."""
    ns = notebook("from mha import scaled_dot_product_attention as course_attention\n",
                  "def my_attention(q):\n    return course_attention(q, q, q)[0]\n",
                  "def answer(q):\n    return my_attention(q)\n")
    message = verdict(ns["answer"], {"scaled_dot_product_attention": "compute the attention yourself."}, X)
    assert message is not None and "uses `scaled_dot_product_attention` (your code called `" in message, message
    ns = notebook("import mha\n", "def answer(q):\n    return mha.scaled_dot_product_attention(q, q, q)[0]\n")
    assert "uses `scaled_dot_product_attention`" in verdict(
        ns["answer"], {"scaled_dot_product_attention": "compute the attention yourself."}, X)


def test_the_learners_own_code_is_accepted_whatever_its_helpers_are_called():
    ns = notebook(
        "def rotate_half(x):\n    d = x.shape[-1] // 2\n    return torch.cat([-x[..., d:], x[..., :d]], dim=-1)\n",
        "def answer(x):\n    return x * 0.5 + rotate_half(x) * 0.5\n")
    assert verdict(ns["answer"], {"rotate_half": "split the halves yourself.",
                                  "apply_rope": "write the rotation yourself."}, X) is None
    ns = notebook("def softmax_by_hand(x):\n    e = torch.exp(x - x.amax(-1, keepdim=True))\n"
                  "    return e / e.sum(-1, keepdim=True)\n",
                  "def answer(x):\n    return softmax_by_hand(x)\n")
    assert verdict(ns["answer"], {"softmax": "write it yourself."}, X) is None


def test_a_library_function_under_the_learners_name_is_still_refused():
    ns = notebook("from mha.rope import rotate_half\n", "def answer(x):\n    return rotate_half(x)\n")
    message = verdict(ns["answer"], {"mha.rotate_half": "split the halves yourself."}, X)
    assert message is not None and "mha.rotate_half" in message, message


def test_the_graders_reference_handed_to_the_learners_code_is_not_the_learners():
    from mha.course.checks import reference

    ns = notebook("def answer(x):\n    return my_softmax(x) * 2\n")
    with reference(ns, my_softmax=lambda s: torch.softmax(s, dim=-1)):
        assert verdict(ns["answer"], {"softmax": "write it yourself."}, X) is None


def test_outside_a_test_case_only_the_source_is_read():
    ns = notebook("def answer(blocks):\n    return torch.concat(blocks)\n")
    forbid(ns["answer"], "answer", {"cat": "visit the blocks one at a time."})  # no `cat` in the source
    assert call(ns["answer"], "answer", BLOCKS).shape == (5, 4)
