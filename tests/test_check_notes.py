"""A check says what it checked (issue 32, item 2).

Specification: a check whose public tests pass says "All test cases passed!" only when nothing
was left unchecked. A question whose answer only the hidden tests grade (a prediction, a multiple
choice) passes its check with a note that says so ("The checks passed. Note: your prediction is
not checked here ..."), in English and in Chinese; the grader's feedback shows a passed case's
notes (the capstone's held-out loss and CPU time).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from mha.course import checks

ROOT = Path(__file__).resolve().parents[1]
MASTERS = sorted(p.stem for p in (ROOT / "grading" / "masters").glob("ex*.ipynb"))
ROW = re.compile(r"^\| (q\d+) \| (.+?) \| (.+?) \| (\d+(?:\.\d+)?) \|$", re.MULTILINE)

TEST_FILE = """from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1

@test_case(points=None, hidden=False)
def test_answer(answer):
    from mha.course.checks import CheckFailed, note
    if answer not in ("a", "b"):
        raise CheckFailed("answer must be a letter")
    {NOTE}
"""


def _check(tmp_path, language: str, with_note: bool):
    note = ('note("your answer is not checked here: its format is accepted, and whether it is '
            'right is graded by your instructor (a hidden test).")') if with_note else "pass"
    (tmp_path / "q1.py").write_text(TEST_FILE.replace("{NOTE}", note), encoding="utf-8")
    return checks.Notebook(tests_dir=str(tmp_path), language=language).check("q1", env={"answer": "a"})


def test_a_check_that_left_nothing_unchecked_says_all_test_cases_passed(tmp_path):
    assert repr(_check(tmp_path, "en", with_note=False)) == "q1 results: All test cases passed!"


def test_a_check_that_leaves_the_answer_to_the_grade_says_so_instead(tmp_path):
    result = _check(tmp_path, "en", with_note=True)
    assert result.passed
    text = repr(result)
    assert "All test cases passed" not in text and "All test cases passed" not in result._repr_html_()
    assert text == ("q1 results: The checks passed. Note:\n    ⓘ your answer is not checked here: its "
                    "format is accepted, and whether it is right is graded by your instructor (a hidden test).")


def test_the_note_is_chinese_in_the_chinese_notebook(tmp_path):
    text = repr(_check(tmp_path, "zh", with_note=True))
    assert text.startswith("q1 结果：检查已通过。请注意：\n    ⓘ 这里不检查你的答案对不对"), text
    assert "not checked" not in text


def test_a_failed_case_shows_its_failure_not_the_note(tmp_path):
    (tmp_path / "q1.py").write_text(TEST_FILE.replace("{NOTE}", 'note("never shown")'), encoding="utf-8")
    result = checks.Notebook(tests_dir=str(tmp_path)).check("q1", env={"answer": "z"})
    assert not result.passed and "never shown" not in repr(result) and "answer must be a letter" in repr(result)


def _unchecked_questions(exercise: str) -> list[str]:
    """The questions whose answer only the hidden tests can grade: predictions and multiple choice."""
    import nbformat

    header = nbformat.read(ROOT / "grading" / "masters" / f"{exercise}.ipynb", as_version=4).cells[1].source
    return [q for q, task, kind, _ in ROW.findall(header)
            if kind == "thought: predict, then measure" or "multiple choice" in task]


@pytest.mark.parametrize("exercise", MASTERS)
def test_every_prediction_and_multiple_choice_check_says_what_it_left_to_the_grade(exercise):
    missing = []
    for question in _unchecked_questions(exercise):
        public = (ROOT / "exercises" / exercise / "tests" / f"{question}.py").read_text(encoding="utf-8")
        if not re.search(r"\bnote\(\s*f?[\"']your (prediction|answer) is not checked here", public):
            missing.append(question)
    assert not missing, f"{exercise}: the public checks of {missing} pass without saying that the answer is graded later"


def test_a_stored_english_note_becomes_what_a_run_in_chinese_shows(tmp_path):
    english = _check(tmp_path, "en", with_note=True)
    stored = {"text/plain": repr(english), "text/html": english._repr_html_()}
    chinese = _check(tmp_path, "zh", with_note=True)
    assert checks.check_output_in("zh", stored) == {"text/plain": repr(chinese), "text/html": chinese._repr_html_()}


def test_the_feedback_file_shows_a_passed_cases_note(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT))
    from grading.grade import Submission, write_feedback

    note = "the graded training run: held-out loss 3.512 nats per token (target: below 3.75), 600 steps in 41 s of CPU time (budget 150 s)."
    cases = [{"name": "q5", "hidden": False, "passed": True, "message": ""},
             {"name": "q5", "hidden": True, "passed": True, "message": note}]
    result = {"score": 5.0, "possible": 5.0, "sha256": "0" * 64, "notes": [],
              "questions": {"q5": {"score": 5.0, "possible": 5.0, "cases": cases}}}
    write_feedback("alice", [Submission("alice", Path("alice.ipynb"), "ex15_capstone", result=result)],
                   {"ex15_capstone": {"title": "Exercise 15"}}, tmp_path / "f.md", False)
    page = (tmp_path / "f.md").read_text(encoding="utf-8")
    assert "- hidden test 1: passed" in page and note in page
    write_feedback("alice", [Submission("alice", Path("alice.ipynb"), "ex15_capstone", result=result)],
                   {"ex15_capstone": {"title": "Exercise 15"}}, tmp_path / "f.md", True)
    assert note not in (tmp_path / "f.md").read_text(encoding="utf-8")  # --hide-hidden
