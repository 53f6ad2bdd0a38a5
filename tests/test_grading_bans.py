"""Bans by behaviour in the instructor's grader (issue 20 item 4, issue 21 item 10): slow.

In the learner's notebook ``call`` records the library functions the learner's code executes
(tests/test_bans_by_behaviour.py). In ``python -m grading.grade`` that code runs in the sandbox:
there the same recorder runs around each call the checks make, the sandbox sends back what it
recorded, and the grader refuses the same things the notebook refuses, and accepts the same. A
small class of exercise-1 notebooks, each the solution with one answer changed, is graded once.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
EXERCISE = "ex01_self_attention"
AUTOGRADER = ROOT / "grading" / "autograder" / EXERCISE
POINTS = json.loads((AUTOGRADER / "manifest.json").read_text())["questions"]  # {"q1": 2.0, ...}
ALL = set(POINTS)

# student -> (the cells that replace the answer cell of `def <name>(`, the questions lost)
CLASS = {
    "solution": (None, set()),
    # q2 asks for softmax by hand: the library's, bound in another cell, or reached by getattr
    "alias": ("softmax", ["normalise = torch.softmax",
                          "def softmax(scores):\n    return normalise(scores, dim=-1)\n"], {"q2"}),
    "getattr": ("softmax", ["def softmax(scores):\n"
                            "    return getattr(torch, 'soft' + 'max')(scores, dim=-1)\n"], {"q2"}),
    # q3 asks for attention: the course's own reference, wrapped under another name
    "wrapper": ("attention", ["from mha import scaled_dot_product_attention as course_attention",
                              "def attention(q, k, v):\n    return course_attention(q, k, v)\n"], {"q3"}),
    # the learner's own helper, by hand, whatever its name (even a banned one): accepted
    "own helper": ("attention", [
        "def scaled_dot_product_attention(q, k, v):\n"
        "    weights = softmax(attention_scores(q, k))\n"
        "    return weights @ v, weights\n",
        "def attention(q, k, v):\n    return scaled_dot_product_attention(q, k, v)\n"], set()),
}


def _notebook(student: str):
    nb = nbformat.read(AUTOGRADER / f"{EXERCISE}-solution.ipynb", as_version=4)
    if CLASS[student][0] is None:
        return nb
    name, cells, _ = CLASS[student]
    index = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "code" and c.source.startswith(f"def {name}("))
    nb.cells[index:index + 1] = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


@pytest.fixture(scope="module")
def grades(tmp_path_factory) -> dict[str, dict]:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")
    tmp = tmp_path_factory.mktemp("bans")
    subs, out = tmp / "submissions", tmp / "results"
    subs.mkdir()
    for student in CLASS:
        nbformat.write(_notebook(student), subs / f"{student.replace(' ', '_')}.ipynb")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MHA_COURSE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [sys.executable, "-m", "grading.grade", str(subs), "--out", str(out), "--jobs", "2",
         "--timeout", "300", "--check-time-limit", "10", "--memory-limit", "2048"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    feedback = {s: (out / "feedback" / f"{s.replace(' ', '_')}.md").read_text(encoding="utf-8")
                for s in CLASS}
    return {student: {"row": rows[student.replace(" ", "_")], "feedback": feedback[student]}
            for student in CLASS}


@pytest.mark.parametrize("student", sorted(CLASS))
def test_the_grader_refuses_and_accepts_what_the_notebook_does(grades, student):
    lost = CLASS[student][-1]
    row = grades[student]["row"]
    got = {q for q in POINTS if float(row[f"ex01.{q}"] or 0) == POINTS[q]}
    assert got == ALL - lost, (student, {q: row[f"ex01.{q}"] for q in POINTS}, grades[student]["feedback"])


@pytest.mark.parametrize("student, ban", [("alias", "softmax"), ("getattr", "softmax"),
                                          ("wrapper", "scaled_dot_product_attention")])
def test_the_feedback_names_what_the_code_called(grades, student, ban):
    assert f"uses `{ban}` (your code called `" in grades[student]["feedback"], grades[student]["feedback"]
