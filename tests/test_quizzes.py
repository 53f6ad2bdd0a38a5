"""The self-check quizzes at the end of every chapter (jupyterquiz, issue 14 item 5).

A quiz is the JSON file chapters/quizzes/NN.json, shown by one code cell at the end of
chapter NN (the cell is in QUIZ_CELL below, word for word). The cell's stored output embeds
the questions, and the book shows that stored output (it does not execute notebooks), so a
quiz edited after the chapter was last executed would silently show the old questions:
test_stored_quiz_output_is_the_current_json catches that. The browser tests
(tests/browser/test_site.py) check that the quizzes render and answer in Chromium offline.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
QUIZ_DIR = CHAPTERS / "quizzes"

QUIZ_CELL = """\
# Self-check: click an answer (or type a number and press Enter) to see whether it is right, and why.
from pathlib import Path
from jupyterquiz import display_quiz

quiz = "quizzes/{nn}.json"
if not Path(quiz).exists():  # e.g. on Colab, where only this notebook was downloaded
    quiz = "https://raw.githubusercontent.com/mha-course/multi-head-attention/main/chapters/" + quiz
display_quiz(quiz)"""
QUIZ_TAGS = {"remove-input", "nbval-ignore-output"}

QUIZ_FILES = sorted(QUIZ_DIR.glob("*.json"))
CHAPTER_NOTEBOOKS = sorted(p for p in CHAPTERS.glob("[0-9][0-9]_*.ipynb"))


def _chapter_number(notebook: Path) -> str:
    return notebook.name[:2]


def _quiz_cells(notebook: Path) -> list[dict]:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "display_quiz(" in "".join(c["source"])]


def _texts(question: dict) -> list[str]:
    texts = [question.get("question", ""), question.get("code", "")]
    for answer in question.get("answers", []):
        texts += [str(answer.get("answer", "")), answer.get("feedback", "")]
    return texts


def test_there_is_a_quiz_for_every_chapter():
    numbers = {p.stem for p in QUIZ_FILES}
    missing = [nb.name for nb in CHAPTER_NOTEBOOKS if _chapter_number(nb) not in numbers]
    assert not missing, f"no chapters/quizzes/NN.json for {missing}"


@pytest.mark.parametrize("path", QUIZ_FILES, ids=lambda p: p.name)
def test_quiz_has_three_to_five_questions_of_a_checked_kind(path):
    questions = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(questions, list) and 3 <= len(questions) <= 5, f"{path.name}: {len(questions)} questions"
    for i, q in enumerate(questions, 1):
        assert q.get("type") in {"multiple_choice", "numeric"}, f"{path.name} question {i}: type {q.get('type')!r}"
        assert q.get("question", "").strip(), f"{path.name} question {i}: no question text"


@pytest.mark.parametrize("path", QUIZ_FILES, ids=lambda p: p.name)
def test_every_answer_explains_itself_after_answering(path):
    for i, q in enumerate(json.loads(path.read_text(encoding="utf-8")), 1):
        where = f"{path.name} question {i}"
        answers = q["answers"]
        if q["type"] == "multiple_choice":
            assert len(answers) >= 2, f"{where}: fewer than 2 choices"
            assert sum(a.get("correct") is True for a in answers) == 1, f"{where}: not exactly one right choice"
            for a in answers:
                assert a.get("feedback", "").strip(), f"{where}: choice {a.get('answer')!r} has no explanation"
        else:
            right = [a for a in answers if a.get("correct") is True and "value" in a]
            assert len(right) == 1 and right[0].get("feedback", "").strip(), f"{where}: one right value with an explanation"
            default = [a for a in answers if a.get("type") == "default"]
            assert default and default[0].get("feedback", "").strip(), f"{where}: no feedback for a wrong number"


@pytest.mark.parametrize("path", QUIZ_FILES, ids=lambda p: p.name)
def test_quiz_text_has_no_tex_no_raw_angle_brackets_and_valid_precision(path):
    # No $...$ or \( \): jupyterquiz typesets with whatever MathJax the page has, and reaches
    # for a CDN in some cases; plain Unicode (d_k, √2, L × S) reads the same everywhere.
    # precision 0 is a RangeError in the reader's console (toPrecision(0)).
    for i, q in enumerate(json.loads(path.read_text(encoding="utf-8")), 1):
        for text in _texts(q):
            assert not re.search(r"\$|\\\(|\\\[", text), f"{path.name} question {i}: TeX in {text[:60]!r}"
            # jupyterquiz shows the text as HTML: a raw <bos> is an (invisible) tag; write &lt;bos&gt;.
            assert "<" not in text and ">" not in text, f"{path.name} question {i}: raw < or > in {text[:60]!r}"
        if "precision" in q:
            assert isinstance(q["precision"], int) and 1 <= q["precision"] <= 15, f"{path.name} question {i}"


@pytest.mark.parametrize("path", QUIZ_FILES, ids=lambda p: p.name)
def test_quiz_belongs_to_a_chapter(path):
    assert list(CHAPTERS.glob(f"{path.stem}_*.ipynb")), f"{path.name}: no chapter {path.stem}_*.ipynb"


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_with_a_quiz_file_shows_it_with_the_standard_cell(notebook):
    nn = _chapter_number(notebook)
    if not (QUIZ_DIR / f"{nn}.json").is_file():
        pytest.skip(f"no quiz for chapter {nn} yet")
    cells = _quiz_cells(notebook)
    assert len(cells) == 1, f"{notebook.name}: {len(cells)} quiz cells (want 1; see /tmp/team/quiz.md / QUIZ_CELL)"
    cell = cells[0]
    assert "".join(cell["source"]) == QUIZ_CELL.format(nn=nn), f"{notebook.name}: the quiz cell differs from QUIZ_CELL"
    tags = set(cell.get("metadata", {}).get("tags", []))
    assert QUIZ_TAGS <= tags, f"{notebook.name}: quiz cell tags {sorted(tags)}, need {sorted(QUIZ_TAGS)}"


def _stored_questions(cell: dict):
    for out in cell.get("outputs", []):
        js = out.get("data", {}).get("application/javascript")
        if js is None:
            continue
        js = "".join(js) if isinstance(js, list) else js
        m = re.match(r"var questions\w+=(.*?);\n\nif \(typeof Question", js, re.S)
        if m:
            return json.loads(m.group(1))
    return None


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.name)
def test_stored_quiz_output_is_the_current_json(notebook):
    nn = _chapter_number(notebook)
    cells = _quiz_cells(notebook)
    if not cells:
        pytest.skip(f"{notebook.name} has no quiz cell yet")
    stored = _stored_questions(cells[0])
    assert stored is not None, f"{notebook.name}: the quiz cell has no stored output (execute the notebook)"
    current = json.loads((QUIZ_DIR / f"{nn}.json").read_text(encoding="utf-8"))
    assert stored == current, (
        f"{notebook.name}: the stored quiz differs from chapters/quizzes/{nn}.json: "
        f"re-execute the chapter (jupyter nbconvert --to notebook --execute --inplace)"
    )
