"""The graded exercises grade honestly.

* ``grading.selfcheck`` (fast, no Jupyter): for every exercise, the solution gets full marks,
  the untouched student notebook runs without error and gets 0, and every classic bug in
  ``grading/known_bugs.py`` loses exactly the points of its question and keeps the others.
  Every exercise's variants are graded once in the suite, in both languages, by
  ``tests/test_checks_language.py`` (with selfcheck's own verdict); here the command itself
  runs on one exercise.
* The instructor command (``python -m grading.grade``: each notebook in a bubblewrap sandbox,
  its tests in the grader) on every exercise's solution (full marks, no notes) and on the
  known bugs of the slow questions, which selfcheck --quick leaves out (exactly that
  question's points lost, as in selfcheck).
  (The hostile class, with the exact points each attack must get, is
  ``tests/test_grading_adversarial.py``.)

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
    numbers = [int(e.split("_")[0][2:]) for e in EXERCISES]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 8
    for exercise in EXERCISES:
        assert len(_manifest(exercise)["questions"]) >= 3, exercise


def test_selfcheck_command_reports_each_variant_of_an_exercise_as_json():
    """The maintainers' command, on exercise 1: one report per variant (solution, untouched
    notebook, each known bug), each with selfcheck's verdict."""
    from grading.known_bugs import BUGS

    exercise = EXERCISES[0]
    done = subprocess.run([sys.executable, "-m", "grading.selfcheck", exercise, "--json", "--quick"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout, done.stderr[-3000:]
    reports = json.loads(done.stdout)
    assert [r["variant"] for r in reports[:2]] == ["solution", "untouched student notebook"]
    assert len(reports) == 2 + len(BUGS[exercise])
    assert all(r["ok"] and r["exercise"] == exercise for r in reports), json.dumps(reports, indent=1)[:6000]
    assert reports[0]["got"] == _manifest(exercise)["questions"]


def test_a_chinese_edition_notebook_is_compared_with_the_chinese_handout():
    """The zh notebooks differ from the English ones in their checks cell (Chinese feedback): the
    grader compares a submission with the edition it came from, so neither is called tampering."""
    import nbformat

    from grading.worker import Exercise, Notes, inspect_submission

    for exercise in ("ex03_masking", EXERCISES[-1]):
        english = ROOT / "exercises" / exercise / f"{exercise}.ipynb"
        chinese = ROOT / "zh" / "exercises" / exercise / f"{exercise}.ipynb"
        both = Exercise.load(AUTOGRADER / exercise, english, chinese)
        for handed_in in (english, chinese):
            notes = Notes()
            inspect_submission(nbformat.read(handed_in, as_version=4), both, notes)
            assert notes.items == [], (handed_in, notes.items)
        notes = Notes()  # without the Chinese handout, its checks cell and comments look edited
        inspect_submission(nbformat.read(chinese, as_version=4),
                           Exercise.load(AUTOGRADER / exercise, english), notes)
        assert notes.items and {kind for kind, _ in notes.items} == {"tampering"}, notes.items


def test_feedback_file_speaks_the_language_of_the_graded_notebook(tmp_path):
    from grading.grade import Submission, write_feedback

    def graded(language):
        case = {"name": "q1", "hidden": False, "passed": False, "message": "causal_mask(4) ..."}
        result = {"score": 0.0, "possible": 3.0, "sha256": "0" * 64, "notes": [],
                  "questions": {"q1": {"score": 0.0, "possible": 2.0, "cases": [
                      case, {**case, "hidden": True, "passed": True}]},
                                "q2": {"score": 0.0, "possible": 1.0, "cases": [case],
                                       "hidden_not_run": True}}}
        if language:
            result["language"] = language
        return Submission("alice", Path("alice.ipynb"), "ex03_masking", result=result)

    exercises = {"ex03_masking": {"title": "Exercise 3"}}
    pages = {}
    for language in (None, "en", "zh"):
        write_feedback("alice", [graded(language)], exercises, tmp_path / "f.md", False)
        pages[language] = (tmp_path / "f.md").read_text(encoding="utf-8")
    assert pages[None] == pages["en"]  # results stored before the language was recorded
    assert "- public test 1: failed" in pages["en"] and "- hidden test 1: passed" in pages["en"]
    assert "## Exercise 3: 0 / 3 points" in pages["en"]
    assert pages["en"].count("- hidden tests: not run (a public test failed") == 1
    assert pages["zh"].count("- 隐藏测试：未运行（有公开测试未通过") == 1
    assert "- 公开测试 1: 未通过" in pages["zh"] and "- 隐藏测试 1: 通过" in pages["zh"]
    assert "| 题目 | 得分 |" in pages["zh"]
    assert "## Exercise 3: 0 / 3 分" in pages["zh"]


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


def _why(results: Path, student: str, exercise: str, question: str) -> str:
    """The graded cases of one question and the notebook's notes, from the raw result: what a
    failing assertion shows, so that a wrong score on another machine explains itself."""
    [raw] = results.glob(f"raw/{student}-*__{exercise}.json")
    result = json.loads(raw.read_text(encoding="utf-8"))
    return json.dumps({"exercise": exercise, "question": question,
                       "graded": result["questions"].get(question), "notes": result["notes"],
                       "status": result["status"], "seconds": result["seconds"],
                       "sandbox_starts": result["sandbox_starts"],
                       "skipped_cells": result["skipped_cells"]}, indent=1)[:4000]


def _fingerprints(folder: Path) -> dict[str, tuple]:
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                         p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_instructor_command_grades_solutions_and_known_bugs_like_selfcheck(tmp_path):
    """Every exercise through the real grading path (each notebook in a sandbox, its tests in
    the grader), in the one-folder-per-student layout: one student handed in every solution,
    another the exercises with a question that `selfcheck --quick` leaves out (SLOW_QUESTIONS),
    each with that question's first classic bug of grading/known_bugs.py. The solutions get
    full marks and no notes (the sandbox's proxies change no verdict); each bug loses exactly
    its question's points, as in selfcheck. So the capstone's q5, the grader's own training run
    through the proxies, is graded here for the solution (full marks) and for a training bug
    (q5 only lost; its public case catches the bug, so the training, a hidden case, is not run
    again for nothing): nowhere else in `make test`. Every other known bug is graded in both
    languages by tests/test_checks_language.py, and bugs through the sandbox by the hostile
    class of tests/test_grading_adversarial.py."""
    import nbformat

    from grading.known_bugs import BUGS
    from grading.selfcheck import SLOW_QUESTIONS, apply_bug

    subs = tmp_path / "submissions"
    (subs / "solution").mkdir(parents=True)
    (subs / "buggy").mkdir()
    bugs = {}
    for exercise in EXERCISES:
        solution = AUTOGRADER / exercise / f"{exercise}-solution.ipynb"
        shutil.copy(solution, subs / "solution" / f"{exercise}.ipynb")
        slow = [bug for bug in BUGS.get(exercise, []) if (exercise, bug[0]) in SLOW_QUESTIONS]
        if slow:
            question, _, replacements, *_ = slow[0]
            bugs[exercise] = question
            buggy = apply_bug(nbformat.read(solution, as_version=4), replacements)
            nbformat.write(buggy, subs / "buggy" / f"{exercise}.ipynb")
    assert bugs, "no known bug of a slow question: the buggy student would hand in nothing"
    before = _fingerprints(subs)
    rows, _ = _grade(subs, tmp_path / "results", "--jobs", "2")
    assert _fingerprints(subs) == before
    rows = {r["student"]: r for r in rows}
    assert set(rows) == {"solution", "buggy"}
    total = sum(_manifest(e)["total"] for e in EXERCISES)
    for exercise in EXERCISES:
        short = exercise.split("_")[0]
        for question, points in _manifest(exercise)["questions"].items():
            assert float(rows["solution"][f"{short}.{question}"]) == points, \
                _why(tmp_path / "results", "solution", exercise, question)
            if exercise in bugs:
                wanted = 0.0 if question == bugs[exercise] else points
                assert float(rows["buggy"][f"{short}.{question}"]) == wanted, \
                    _why(tmp_path / "results", "buggy", exercise, question)
    assert float(rows["solution"]["total"]) == total == float(rows["solution"]["possible"])
    for exercise, question in bugs.items():  # q5's training (hidden) runs for the solution only
        for student, skipped in (("solution", False), ("buggy", True)):
            [raw] = (tmp_path / "results").glob(f"raw/{student}-*__{exercise}.json")
            graded = json.loads(raw.read_text(encoding="utf-8"))["questions"][question]
            assert graded["hidden_not_run"] is skipped, _why(tmp_path / "results", student, exercise, question)
            assert any(case["hidden"] for case in graded["cases"]) is not skipped
    for kind in ("duplicate", "tampering", "sandbox", "limits", "errors", "other"):
        assert rows["solution"][kind] == "", (kind, rows["solution"][kind])
