"""Bans by behaviour in the instructor's grader (issue 20 item 4, issue 21 item 10): slow.

In the learner's notebook ``call`` records the library functions the learner's code executes
(tests/test_bans_by_behaviour.py). In ``python -m grading.grade`` that code runs in the sandbox:
there the same recorder runs around each call the checks make, the sandbox sends back what it
recorded, and the grader refuses the same things the notebook refuses, and accepts the same. A
small class of exercise-1 notebooks, each the solution with one answer changed, is graded once,
together with a second class: for each exercise whose bans name the course's own references
(issue 21 item 10), the solution with one answer that wraps such a reference under a name bound
in another cell: the wrapper loses that question and keeps every other point. (That the solutions
themselves keep every point under the same grader is tests/test_exercises_grading.py's
instructor-command test, which grades every exercise's solution.)
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
sys.path.insert(0, str(ROOT))  # the grading package
from grading.grade import file_name  # noqa: E402  (feedback/<name>-<hash>.md)

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
def graded(tmp_path_factory) -> dict[str, dict]:
    """Both classes of this file (the exercise-1 class above, the wrappers below) in one
    submissions folder, graded by one run of the command (its start-up and preflight are a good
    part of the cost of so few notebooks): student -> grades.csv row and feedback."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")
    tmp = tmp_path_factory.mktemp("bans")
    subs, out = tmp / "submissions", tmp / "results"
    subs.mkdir()
    for student in CLASS:
        nbformat.write(_notebook(student), subs / f"{student.replace(' ', '_')}.ipynb")
    _write_wrapper_class(subs)
    return _grade_class(subs, out, check_time_limit=20)


@pytest.fixture(scope="module")
def grades(graded) -> dict[str, dict]:
    return {student: graded[student.replace(" ", "_")] for student in CLASS}


def _grade_class(subs: Path, out: Path, check_time_limit: int) -> dict[str, dict]:
    """``python -m grading.grade`` on the folder ``subs``: student -> grades.csv row and feedback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MHA_COURSE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [sys.executable, "-m", "grading.grade", str(subs), "--out", str(out), "--jobs", "2",
         "--timeout", "300", "--check-time-limit", str(check_time_limit), "--memory-limit", "2048"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return {student: {"row": row, "feedback": (out / "feedback" / f"{file_name(student)}.md").read_text(encoding="utf-8")}
            for student, row in rows.items()}


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


# issue 21 item 10: exercise -> (the question, the answer cell (`def name(` or `class name(`),
# the cells that replace it: a wrapper of the course's own reference, bound in another cell, so
# that only what the code executes can tell)
WRAPPERS = {
    "ex02_multi_head": ("q4", "count_parameters", [
        "import mha\nbuild = mha.MultiHeadAttention",
        "def count_parameters(d_model, num_heads):\n"
        "    return sum(p.numel() for p in build(d_model, num_heads).parameters())\n"]),
    "ex05_transformer_block": ("q4", "encoder_layer", [
        "import mha\nwiring = mha.EncoderLayer.forward",
        "import types\n\ndef encoder_layer(x, self_attn, ffn, norm1, norm2, mask=None):\n"
        "    parts = types.SimpleNamespace(norm_first=False, dropout=lambda t: t, ff=ffn, norm1=norm1,\n"
        "                                  norm2=norm2, self_attn=lambda t, mask, need_weights: (self_attn(t, mask), None))\n"
        "    return wiring(parts, x, mask)[0]\n"]),
    "ex08_heads": ("q5", "ablate_kv_head", [
        "from mha.course.induction import ablate_heads as switch_off",
        "import types\n\ndef ablate_kv_head(layer, x, kv_head):\n"
        "    group = layer.num_heads // layer.num_kv_heads\n"
        "    whole = types.SimpleNamespace(num_layers=1, num_heads=layer.num_heads, attns=[layer])\n"
        "    with switch_off(whole, [(0, h) for h in range(kv_head * group, (kv_head + 1) * group)]):\n"
        "        return layer(x)[0]\n"]),
    "ex13_positions": ("q3", "rope_left_padded", [
        "import mha\ncount = mha.GPT._positions",
        "def rope_left_padded(x, mask, base=10000.0):\n"
        "    positions = count(torch.arange(x.shape[2]), mask)\n"
        "    return torch.where(mask[:, None, :, None], rope(x, positions, base), x)\n"]),
    "ex14_modern_block": ("q3", "modern_block", [
        "import mha\nwiring = mha.Block.forward",
        "import types\n\ndef modern_block(x, attention, norm1_weight, norm2_weight, W_gate, W_up, W_down, eps=1e-6):\n"
        "    parts = types.SimpleNamespace(norm1=lambda t: rms_norm(t, norm1_weight, eps),\n"
        "                                  attn=lambda t, **options: (attention(t), None),\n"
        "                                  dropout=lambda t: t, norm2=lambda t: rms_norm(t, norm2_weight, eps),\n"
        "                                  mlp=lambda t: swiglu(t, W_gate, W_up, W_down))\n"
        "    return wiring(parts, x)[0]\n"]),
}


def _manifest(exercise: str) -> dict[str, float]:
    return json.loads((ROOT / "grading" / "autograder" / exercise / "manifest.json").read_text())["questions"]


def _wrapped(exercise: str):
    _, name, cells = WRAPPERS[exercise]
    nb = nbformat.read(ROOT / "grading" / "autograder" / exercise / f"{exercise}-solution.ipynb", as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                 and c.source.startswith((f"def {name}(", f"class {name}(")))
    nb.cells[index:index + 1] = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


def _write_wrapper_class(subs: Path) -> None:
    """Each exercise's wrapper, one folder per student."""
    for exercise in WRAPPERS:
        student = f"{exercise}_wrapper"
        (subs / student).mkdir(parents=True)
        nbformat.write(_wrapped(exercise), subs / student / f"{exercise}.ipynb")


@pytest.fixture(scope="module")
def wrapper_grades(graded) -> dict[str, dict]:
    return graded


@pytest.mark.parametrize("exercise", sorted(WRAPPERS))
def test_a_wrapper_of_the_course_reference_loses_its_question(wrapper_grades, exercise):
    question = WRAPPERS[exercise][0]
    points = _manifest(exercise)
    row, feedback = wrapper_grades[f"{exercise}_wrapper"]["row"], wrapper_grades[f"{exercise}_wrapper"]["feedback"]
    got = {q: float(row[f"{exercise[:4]}.{q}"] or 0) for q in points}
    assert got == {q: 0.0 if q == question else p for q, p in points.items()}, (got, feedback)
    assert "(your code called `" in feedback
