"""The graded exercises grade honestly.

* ``grading.selfcheck`` (fast, no Jupyter): for every exercise, the solution gets full marks,
  the untouched student notebook runs without error and gets 0, and every classic bug in
  ``grading/known_bugs.py`` loses exactly the points of its question and keeps the others.
* The instructor command (``python -m grading.grade``: a Jupyter kernel per submission, via
  otter-grader) on every exercise's solution: full marks.
* The instructor command on a class of seven for exercise 1: a correct, a buggy, a crashing,
  a looping, a cheating-and-printing-megabytes, a kernel-killing and an untouched submission.
  The CSV is exactly the expected one, each submission stays within its time limits, the
  reasons are in the feedback, and the submissions are left untouched.

(The untouched student notebooks also run in a real kernel under nbval, whose stored outputs
show every check failing; tests/test_exercises_static.py checks those outputs.)
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
AUTOGRADER = ROOT / "grading" / "autograder"
EXERCISES = sorted(p.name for p in AUTOGRADER.iterdir() if (p / "manifest.json").exists())


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MHA_COURSE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _manifest(exercise: str) -> dict:
    return json.loads((AUTOGRADER / exercise / "manifest.json").read_text())


def test_every_chapter_has_an_exercise():
    assert [e.split("_")[0] for e in EXERCISES] == [f"ex0{i}" for i in range(1, 9)]
    for exercise in EXERCISES:
        assert len(_manifest(exercise)["questions"]) >= 3, exercise


def test_selfcheck_solutions_untouched_notebooks_and_known_bugs():
    """One process for every exercise (importing torch and otter once)."""
    from grading.known_bugs import BUGS

    done = subprocess.run([sys.executable, "-m", "grading.selfcheck", *EXERCISES, "--json"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900)
    assert done.stdout, done.stderr[-3000:]
    reports = json.loads(done.stdout)
    bad = [r for r in reports if not r["ok"]]
    assert not bad, json.dumps(bad, indent=1)[:6000]
    for exercise in EXERCISES:
        assert len(BUGS[exercise]) >= 2, f"{exercise}: at least two classic bugs are checked"
        mine = [r for r in reports if r["exercise"] == exercise]
        assert [r["variant"] for r in mine[:2]] == ["solution", "untouched student notebook"]
        assert len(mine) == 2 + len(BUGS[exercise])
        assert mine[0]["got"] == _manifest(exercise)["questions"]
        untouched = mine[1]
        assert untouched["cell_errors"] == [] and set(untouched["got"].values()) == {0}
        for report in mine[2:]:  # each bug's feedback names what was checked
            messages = [m for ms in report["failures"].values() for m in ms]
            assert messages and all("CheckFailed" in m for m in messages), report


# ------------------------------------------------------------------ the instructor command

def _grade(folder: Path, out: Path, *options: str) -> tuple[list[dict], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grading.grade", str(folder), "--out", str(out),
                           *options], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=1500)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f)), seconds


def _fingerprints(folder: Path) -> dict[str, tuple]:
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                         p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_instructor_command_gives_every_solution_full_marks(tmp_path):
    """Every exercise through the real grading path (a kernel per notebook), in the
    one-folder-per-student layout: one student who handed in every solution."""
    subs = tmp_path / "submissions"
    (subs / "solution").mkdir(parents=True)
    for exercise in EXERCISES:
        shutil.copy(AUTOGRADER / exercise / f"{exercise}-solution.ipynb",
                    subs / "solution" / f"{exercise}.ipynb")
    before = _fingerprints(subs)
    rows, _ = _grade(subs, tmp_path / "results", "--jobs", "2")
    assert _fingerprints(subs) == before
    assert len(rows) == 1 and rows[0]["student"] == "solution"
    row = rows[0]
    for exercise in EXERCISES:
        short = exercise.split("_")[0]
        for question, points in _manifest(exercise)["questions"].items():
            assert float(row[f"{short}.{question}"]) == points, (exercise, question)
    total = sum(_manifest(e)["total"] for e in EXERCISES)
    assert float(row["total"]) == total == float(row["possible"])
    assert row["notes"] == ""


def _class_of_seven(subs: Path) -> None:
    exercise = "ex01_self_attention"
    solution = nbformat.read(AUTOGRADER / exercise / f"{exercise}-solution.ipynb", as_version=4)

    def copy():
        return nbformat.from_dict(json.loads(json.dumps(solution)))

    def index_after(nb, question):
        return next(i for i, c in enumerate(nb.cells)
                    if c.source.strip() == f'grader.check("{question}")') + 1

    def replace(nb, old, new):
        cell = next(c for c in nb.cells if old in c.source)
        cell.source = cell.source.replace(old, new)

    nbformat.write(solution, subs / "alice.ipynb")  # correct

    bob = copy()  # the classic // bug: loses question 1 only
    replace(bob, "/ math.sqrt(d_k)", "// math.sqrt(d_k)")
    nbformat.write(bob, subs / "bob.ipynb")

    carol = copy()  # raises, calls sys.exit, and never wrote question 3
    i = index_after(carol, "q2")
    carol.cells[i:i] = [nbformat.v4.new_code_cell('raise ValueError("oops")'),
                        nbformat.v4.new_code_cell("import sys\nsys.exit(1)")]
    replace(carol, "weights = softmax(attention_scores(q, k))\n    return weights @ v, weights",
            "return None")
    nbformat.write(carol, subs / "carol.ipynb")

    dave = copy()  # question 1 loops forever when called; one cell loops forever at top level
    replace(dave, "d_k = q.shape[-1]", "d_k = q.shape[-1]\n    while d_k > 0:\n        d_k = d_k + 1")
    dave.cells.insert(index_after(dave, "q3"), nbformat.v4.new_code_cell("while True:\n    pass"))
    nbformat.write(dave, subs / "dave.ipynb")

    # erin: forgot the scaling, then "fixed" her checks: deleted one check cell, turned another
    # into a print, replaced grader.check, edited the public tests in her folder, and printed
    # 5 MB. Graded with the real tests: loses question 1, keeps the rest.
    erin = copy()
    replace(erin, "return q @ k.transpose(-2, -1) / math.sqrt(d_k)",
            "return q @ k.transpose(-2, -1)")
    erin.cells = [c for c in erin.cells if c.source.strip() != 'grader.check("q2")']
    replace(erin, 'grader.check("q1")', 'print("q1 passed!")')
    erin.cells.insert(3, nbformat.v4.new_code_cell(
        'grader.check = lambda question: print(question, "passed!")\nprint("x" * 5_000_000)'))
    (subs / "erin" / "tests").mkdir(parents=True)
    nbformat.write(erin, subs / "erin" / f"{exercise}.ipynb")
    (subs / "erin" / "tests" / "q1.py").write_text('OK_FORMAT = False\nname = "q1"\npoints = 2\n')

    # grace hands in the notebook as she got it
    shutil.copy(ROOT / "exercises" / exercise / f"{exercise}.ipynb", subs / "grace.ipynb")

    frank = copy()  # kills the kernel right after question 1
    frank.cells.insert(index_after(frank, "q1"), nbformat.v4.new_code_cell("import os\nos._exit(1)"))
    nbformat.write(frank, subs / "frank.ipynb")


EXPECTED_CLASS = {  # student: (q1, q2, q3, q4, total)
    "alice": ("2", "2", "3", "2", "9"),
    "bob": ("0", "2", "3", "2", "7"),
    "carol": ("2", "2", "0", "2", "6"),
    "dave": ("0", "2", "3", "2", "7"),
    "erin": ("0", "2", "3", "2", "7"),
    "frank": ("2", "2", "3", "2", "9"),
    "grace": ("0", "0", "0", "0", "0"),
}
LIMITS = {"timeout": 150, "cell_timeout": 10, "check_time_limit": 3}


def test_instructor_command_on_a_class_of_seven(tmp_path):
    subs = tmp_path / "submissions"
    subs.mkdir()
    _class_of_seven(subs)
    before = _fingerprints(subs)
    out = tmp_path / "results"
    rows, seconds = _grade(subs, out, "--jobs", "2", "--timeout", str(LIMITS["timeout"]),
                           "--cell-timeout", str(LIMITS["cell_timeout"]),
                           "--check-time-limit", str(LIMITS["check_time_limit"]))
    print(f"graded 7 submissions in {seconds:.0f} s")
    print((out / "grades.csv").read_text())

    # Submissions are never modified, and nothing is written next to them.
    assert _fingerprints(subs) == before

    header = ["student", "ex01.q1", "ex01.q2", "ex01.q3", "ex01.q4", "total", "possible", "notes"]
    assert list(rows[0]) == header
    got = {r["student"]: tuple(r[c] for c in header[1:6]) for r in rows}
    assert got == EXPECTED_CLASS
    assert {r["possible"] for r in rows} == {"9"}
    notes = {r["student"]: r["notes"] for r in rows}
    assert notes["alice"] == notes["bob"] == notes["grace"] == ""
    assert "raised ValueError: oops" in notes["carol"] and "called sys.exit()" in notes["carol"]
    assert f"ran for more than {LIMITS['cell_timeout']} s and was interrupted" in notes["dave"]
    assert "check cell of q1 was deleted or edited" in notes["erin"]
    assert "check cell of q2 was deleted or edited" in notes["erin"]
    assert "printed 5.0 MB" in notes["erin"]
    assert "stopped the grading" in notes["frank"] and "graded again without it" in notes["frank"]

    # Each submission stayed within its time limit; the feedback says why points were lost.
    for student in EXPECTED_CLASS:
        raw = json.loads((out / "raw" / f"{student}__ex01_self_attention.json").read_text())
        assert raw["seconds"] <= LIMITS["timeout"], (student, raw["seconds"])
        assert (out / "feedback" / f"{student}.md").exists()
    dave = (out / "feedback" / "dave.md").read_text()
    assert f"did not finish within {LIMITS['check_time_limit']} s" in dave
    bob = (out / "feedback" / "bob.md").read_text()
    assert "`//` is floor division" in bob and "### q1: 0 / 2" in bob
    erin = (out / "feedback" / "erin.md").read_text()
    assert "the scores are not scaled" in erin
    assert len(erin) < 100_000  # the 5 MB of output are not copied into the feedback
