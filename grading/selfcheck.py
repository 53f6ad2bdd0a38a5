"""Check that an exercise's tests grade honestly, quickly and without Jupyter.

    python -m grading.selfcheck                    # every exercise
    python -m grading.selfcheck ex03_masking --json
    python -m grading.selfcheck --quick            # without the slow questions (SLOW_QUESTIONS)

For each exercise this grades, against the public *and* hidden tests of
``grading/autograder/<exercise>/tests``:

* the solution notebook: it must get full marks;
* the untouched student notebook: every cell must run without error, and it must get 0;
* every known-buggy variant of the solution listed in ``grading/known_bugs.py`` (a classic
  mistake written into one question's solution): it must lose exactly the points of that
  question and keep all the others, and where the bug lists the feedback it must get (a
  hint), that text must be in the question's failure messages.

The notebook's code cells run with ``exec`` in a fresh namespace per variant (the check
cells and the cells tagged ``skip-in-grading`` are skipped, as the grader skips them; the test
files are then run against the namespace with otter-grader's own test runner), so dozens of
variants take seconds. The questions in ``SLOW_QUESTIONS`` (the capstone's training run, about
a minute per variant) are graded too unless ``--quick`` leaves them out: then neither they nor
their known bugs are checked (the test suite's quick run does this; its slow tests grade them
through the instructor command). The real grading path, a Jupyter kernel per
submission, is ``grading.grade``; the test suite runs it too.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import linecache
import os
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"
EXERCISES = ROOT / "exercises"
SKIP_TAG = "skip-in-grading"  # cells the grader does not run (the capstone's own training run)
# Questions whose tests take a minute or more: (exercise, question) -> why
SLOW_QUESTIONS = {("ex15_capstone", "q5"): "trains a model for 600 steps"}


def apply_bug(nb, replacements: list[tuple[str, str]]):
    """A copy of ``nb`` with each ``old`` text (which must occur exactly once) replaced."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for old, new in replacements:
        cells = [c for c in nb.cells if c.cell_type == "code" and old in c.source]
        count = sum(c.source.count(old) for c in cells)
        if count != 1:
            raise ValueError(f"bug text {old!r} occurs {count} times in the solution, not once")
        cells[0].source = cells[0].source.replace(old, new)
    return nb


def run_cells(nb, label: str) -> tuple[dict, list[str]]:
    """Execute the code cells (check cells excluded) in a fresh namespace."""
    namespace = {"__name__": "__main__"}
    errors = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "grader.check(" in cell.source \
                or SKIP_TAG in cell.metadata.get("tags", []):
            continue
        filename = f"<{label} cell {index}>"
        linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, filename, "exec"), namespace)
        except Exception as exc:
            errors.append(f"cell {index}: {type(exc).__name__}: {exc}")
    return namespace, errors


def score(namespace: dict, exercise: str, quick: bool = False, questions=None,
          language: str | None = None, public: bool = False) -> dict[str, dict]:
    """Points per question, and each failed test's feedback as ``<error type>: <message>``
    (``quick``: without the questions of ``SLOW_QUESTIONS``; ``questions``: only these;
    ``language``: of the feedback, 'en' or 'zh'; ``public``: the student's tests only)."""
    from mha.course.checks import run_test_file

    scores = {}
    folder = (EXERCISES if public else AUTOGRADER) / exercise / "tests"
    tests = sorted(folder.glob("q*.py"), key=lambda p: int(p.stem[1:]))
    for path in tests:
        if quick and (exercise, path.stem) in SLOW_QUESTIONS:
            continue
        if questions is not None and path.stem not in questions:
            continue
        test, results = run_test_file(path, namespace, language=language)
        failures = [f"{r.error}: {r.message}" for r in results if not r.passed]
        scores[test.name] = {"score": test.score, "possible": test.possible,
                             "failures": failures}
    return scores


def variants(exercise: str, quick: bool = False):
    from grading.known_bugs import BUGS

    manifest = json.loads((AUTOGRADER / exercise / "manifest.json").read_text())
    full = {q: p for q, p in manifest["questions"].items()
            if not (quick and (exercise, q) in SLOW_QUESTIONS)}
    solution = nbformat.read(AUTOGRADER / exercise / f"{exercise}-solution.ipynb", as_version=4)
    student = nbformat.read(EXERCISES / exercise / f"{exercise}.ipynb", as_version=4)
    yield "solution", solution, full, None
    yield "untouched student notebook", student, {q: 0 for q in full}, None
    for question, description, replacements, *feedback in BUGS.get(exercise, []):
        if question not in full:
            continue  # a slow question left out by --quick
        yield (f"bug in {question}: {description}", apply_bug(solution, replacements),
               {q: (0 if q == question else p) for q, p in full.items()},
               (question, expected_feedback(exercise, question, feedback[0])) if feedback else None)


MISTAKE = "mistake:"


def expected_feedback(exercise: str, question: str, feedback: str, language: str = "en") -> str:
    """The text a known bug's feedback must contain: ``feedback`` itself, or for
    ``'mistake:<id>'`` the catalogue's hint of that mistake (mha/course/mistakes) in ``language``."""
    if not feedback.startswith(MISTAKE):
        return feedback
    from mha.course.mistakes import mistake

    return mistake(exercise, question, feedback[len(MISTAKE):])[language]


def report(exercise: str, name: str, expected: dict, feedback, errors: list[str],
           got: dict[str, dict]) -> dict:
    """The verdict on one variant: the points it got (``got``, as :func:`score` returns them)
    are the ones expected, only a bug may raise in its cells, and a known bug's feedback has
    the text it must have."""
    scores = {q: v["score"] for q, v in got.items()}
    ok = scores == expected and (not errors or name.startswith("bug"))
    hint_missing = None
    if feedback is not None:
        question, text = feedback
        if not any(text in m for m in got[question]["failures"]):
            ok, hint_missing = False, text
    return {"exercise": exercise, "variant": name, "expected": expected,
            "got": scores, "cell_errors": errors, "ok": ok,
            "missing_feedback": hint_missing,
            "failures": {q: v["failures"] for q, v in got.items() if v["failures"]}}


def check_exercise(exercise: str, quick: bool = False) -> list[dict]:
    reports = []
    for name, nb, expected, feedback in variants(exercise, quick):
        namespace, errors = run_cells(nb, exercise)
        reports.append(report(exercise, name, expected, feedback, errors,
                              score(namespace, exercise, quick)))
    return reports


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exercises", nargs="*")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument("--messages", action="store_true",
                        help="also print the feedback that each buggy variant gets")
    parser.add_argument("--quick", action="store_true",
                        help="leave out the slow questions (SLOW_QUESTIONS) and their bugs")
    args = parser.parse_args(argv)
    names = args.exercises or sorted(p.name for p in AUTOGRADER.iterdir() if p.is_dir())
    os.environ.setdefault("MHA_CHECK_TIME_LIMIT", "20")
    # Tiny tensors: one thread is much faster than several fighting over busy cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.pop("MHA_COURSE_SOURCE", None)
    reports = []
    with tempfile.TemporaryDirectory() as tmp:  # otter.Notebook writes .OTTER_LOG to the cwd
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            for name in names:
                reports += check_exercise(name, args.quick)
        finally:
            os.chdir(cwd)
    if args.json:
        print(json.dumps(reports, indent=1))
    else:
        for r in reports:
            mark = "ok  " if r["ok"] else "FAIL"
            print(f"{mark} {r['exercise']}: {r['variant']}: {r['got']}")
            if not r["ok"]:
                print(f"       expected {r['expected']}; cell errors: {r['cell_errors']}")
                if r["missing_feedback"]:
                    print(f"       the feedback does not say: {r['missing_feedback']!r}")
            if not r["ok"] or (args.messages and r["variant"].startswith("bug")):
                for q, messages in r["failures"].items():
                    for m in messages:
                        print("       " + m.replace("\n", "\n       "))
    return 0 if all(r["ok"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
