"""Most points of the exercises need thought, and each exercise says which questions do.

Each exercise's header table has a Kind column: ``guided`` (a cell of the chapter shows how) or
``thought: <kind>`` (predict, then measure; debugging; design; transfer), and a sentence giving the
thought points. A thought question carries the marker line below under its heading, a guided one
never does. Issue 20's targets: at least 55% of all points are thought, and 35% in each exercise.
(Whether a question really needs thought is a reader's judgement; this test keeps the labels, the
markers, the points and the shares consistent.)
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = sorted(p.stem for p in (ROOT / "grading" / "masters").glob("ex*.ipynb"))
MARKER = "*A question that goes beyond the chapter: no recipe, only the goal.*"
KINDS = {"guided", "thought: predict, then measure", "thought: debugging", "thought: design",
         "thought: transfer"}
ROW = re.compile(r"^\| (q\d+) \| (.+?) \| (.+?) \| (\d+(?:\.\d+)?) \|$", re.MULTILINE)
SENTENCE = re.compile(r"\*thought\* questions\s+\((\d+) of (\d+) points here\)")


def _notebook(exercise: str):
    return nbformat.read(ROOT / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)


def _kinds(exercise: str) -> dict[str, tuple[str, float]]:
    """{question: (kind, points)} from the header table."""
    header = _notebook(exercise).cells[0].source
    assert "| Question | Task | Kind | Points |" in header, f"{exercise}: no Kind column in the header"
    return {q: (kind, float(points)) for q, _, kind, points in ROW.findall(header)}


def _points(exercise: str) -> dict[str, float]:
    manifest = ROOT / "grading" / "autograder" / exercise / "manifest.json"
    return json.loads(manifest.read_text())["questions"]


def _thought_points(exercise: str) -> float:
    return sum(p for kind, p in _kinds(exercise).values() if kind.startswith("thought"))


@pytest.mark.parametrize("exercise", EXERCISES)
def test_header_lists_every_question_with_its_kind_and_points(exercise):
    kinds = _kinds(exercise)
    assert {q: p for q, (_, p) in kinds.items()} == _points(exercise)
    unknown = {q: k for q, (k, _) in kinds.items() if k not in KINDS}
    assert not unknown, f"{exercise}: kinds must be one of {sorted(KINDS)}; got {unknown}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_thought_questions_and_only_they_carry_the_marker(exercise):
    marked = set()
    for cell in _notebook(exercise).cells:
        heading = re.match(r"## Question (\d+)", cell.source) if cell.cell_type == "markdown" else None
        if heading and MARKER in cell.source:
            marked.add(f"q{heading.group(1)}")
    thought = {q for q, (kind, _) in _kinds(exercise).items() if kind.startswith("thought")}
    assert marked == thought, f"{exercise}: marked {sorted(marked)}, thought in the header {sorted(thought)}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_header_sentence_gives_the_thought_points(exercise):
    found = SENTENCE.search(_notebook(exercise).cells[0].source.replace("\n", " "))
    assert found, f"{exercise}: the header does not say how many points are thought"
    assert (float(found.group(1)), float(found.group(2))) == (
        _thought_points(exercise), sum(_points(exercise).values()))


@pytest.mark.parametrize("exercise", EXERCISES)
def test_at_least_35_percent_of_each_exercise_is_thought(exercise):
    share = _thought_points(exercise) / sum(_points(exercise).values())
    assert share >= 0.35, f"{exercise}: {share:.0%} of the points are thought"


def test_at_least_55_percent_of_all_points_are_thought():
    thought = sum(_thought_points(e) for e in EXERCISES)
    total = sum(sum(_points(e).values()) for e in EXERCISES)
    assert thought / total >= 0.55, f"{thought:g} of {total:g} points ({thought / total:.0%}) are thought"
