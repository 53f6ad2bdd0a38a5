"""The catalogue of classic mistakes (mha/course/mistakes/exNN.py, issue 20).

Specification: every catalogued mistake is recognised by behaviour and named. For each entry
(question, id) of an exercise's data file,
* a bug planted into the solution (grading/known_bugs.py, feedback ``"mistake:<id>"``) makes
  the question's public checks (what the learner runs) show the entry's hint, word for word,
  in English and in Chinese;
* the exercise's tests hand the checks the value that mistake produces (``hints(..., id=value)``);
and every question that computes attention recognises the classics (no 1/sqrt(d_k) scale, the
softmax over the wrong axis and, where there is a mask, an inverted mask).
"""
from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for grading.*

from grading.known_bugs import BUGS
from grading.selfcheck import AUTOGRADER, MISTAKE, apply_bug, expected_feedback, run_cells, score
from mha.course import mistakes

HINTS = {"hints", "catalogued"}  # mha.course.mistakes.hints, as the test files import it
CHINESE = re.compile(r"[\u4e00-\u9fff]")

# Questions whose answer computes attention, and the classics each must recognise.
# (Exercise 10's tiled attention has no softmax to misplace; exercise 3's q1 and q4 build masks.)
MASKED = ("no_scale", "softmax_axis", "inverted_mask")
ATTENTION_QUESTIONS = {
    ("ex01", "q3"): ("no_scale", "softmax_axis"),
    ("ex01", "q5"): ("no_scale", "softmax_axis"),
    ("ex02", "q3"): ("no_scale", "softmax_axis"),
    ("ex02", "q6"): ("no_scale", "softmax_axis"),
    ("ex03", "q1"): ("inverted_mask", "misaligned_mask"),
    ("ex03", "q3"): MASKED,
    ("ex03", "q4"): ("inverted_mask",),
    ("ex04", "q2"): MASKED,
    ("ex04", "q4"): MASKED,
    ("ex07", "q4"): ("no_scale", "softmax_axis"),
    ("ex09", "q1"): MASKED,
    ("ex10", "q2"): ("no_scale",),
    ("ex13", "q2"): ("no_scale", "softmax_axis"),
    ("ex15", "q1"): MASKED,
}


def exercise_dir(short: str) -> Path:
    return next(AUTOGRADER.glob(f"{short}_*"))


def catalogued() -> list[tuple[str, str, str]]:
    return [(short, question, name) for short in mistakes.exercises()
            for question, entries in mistakes.catalogue(short).items() for name in entries]


def planted(short: str) -> dict[tuple[str, str], list]:
    """(question, mistake id) -> the known bugs of ``short`` that plant it."""
    found = {}
    exercise = exercise_dir(short).name
    for question, description, replacements, *feedback in BUGS.get(exercise, []):
        if feedback and feedback[0].startswith(MISTAKE):
            found.setdefault((question, feedback[0][len(MISTAKE):]), []).append((description, replacements))
    return found


def named_in_tests(short: str) -> set[tuple[str, str]]:
    """(question, id) of every ``hints("exNN", "qN", id=...)`` in the exercise's test files."""
    found = set()
    for path in (exercise_dir(short) / "tests").glob("q*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in HINTS and len(node.args) >= 2:
                question = node.args[1].value
                found |= {(question, keyword.arg) for keyword in node.keywords}
    return found


def test_every_entry_has_how_it_is_seen_and_a_hint_in_both_languages():
    assert mistakes.exercises(), "no data file in mha/course/mistakes/"
    problems, chinese_of = [], {}
    for short, question, name in catalogued():
        entry = mistakes.catalogue(short)[question][name]
        where = f"{short}.py {question} {name}"
        if set(entry) != mistakes.FIELDS:
            problems.append(f"{where}: fields {sorted(entry)}, expected {sorted(mistakes.FIELDS)}")
            continue
        if not CHINESE.search(entry["zh"]):
            problems.append(f"{where}: the zh hint is not Chinese: {entry['zh']!r}")
        if chinese_of.setdefault(entry["en"], entry["zh"]) != entry["zh"]:
            problems.append(f"{where}: the same English hint has two Chinese texts")
    assert not problems, "\n".join(problems)


def test_an_exercise_without_a_data_file_has_no_mistakes():
    assert mistakes.catalogue("ex99_not_written_yet") == {}
    with pytest.raises(KeyError, match="mha/course/mistakes/ex99.py"):
        mistakes.hints("ex99", "q1", anything=1)
    with pytest.raises(ValueError, match="not an exercise name"):
        mistakes.catalogue("induction")


def test_every_catalogued_mistake_is_planted_and_named_by_the_tests():
    problems = []
    for short in mistakes.exercises():
        bugs, named = planted(short), named_in_tests(short)
        for question, entries in mistakes.catalogue(short).items():
            for name in entries:
                if (question, name) not in bugs:
                    problems.append(f"{short} {question} {name}: no bug in grading/known_bugs.py "
                                    f"with feedback 'mistake:{name}'")
                if (question, name) not in named:
                    problems.append(f"{short} {question} {name}: no test of {question} passes "
                                    f"hints(..., {name}=<the value this mistake gives>)")
        for question, name in bugs:
            if name not in mistakes.catalogue(short).get(question, {}):
                problems.append(f"{short}: known bug 'mistake:{name}' of {question} is not catalogued")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", sorted(ATTENTION_QUESTIONS), ids=lambda key: "-".join(key))
def test_every_attention_question_recognises_the_classics(key):
    short, question = key
    missing = set(ATTENTION_QUESTIONS[key]) - set(mistakes.catalogue(short).get(question, {}))
    assert not missing, f"{short} {question} does not catalogue {sorted(missing)}"


@pytest.mark.parametrize("short", mistakes.exercises())
def test_each_planted_mistake_gets_its_hint_in_english_and_in_chinese(short):
    import nbformat

    exercise = exercise_dir(short).name
    solution = nbformat.read(AUTOGRADER / exercise / f"{exercise}-solution.ipynb", as_version=4)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    problems = []
    for question, description, replacements, *feedback in BUGS.get(exercise, []):
        if not (feedback and feedback[0].startswith(MISTAKE)):
            continue
        namespace, _ = run_cells(apply_bug(solution, replacements), exercise)
        for language in ("en", "zh"):
            hint = expected_feedback(exercise, question, feedback[0], language)
            result = score(namespace, exercise, questions={question}, language=language, public=True)[question]
            if result["score"] != 0 or not any(hint in message for message in result["failures"]):
                problems.append(f"{exercise} {question} ({description}), {language}: score "
                                f"{result['score']}, hint {hint!r} not in {result['failures']}")
    assert not problems, "\n".join(problems)


def test_classic_attention_applies_each_mistake_to_the_reference():
    import torch

    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 3)
    mask = torch.ones(4, 5, dtype=torch.bool).tril(1)
    found = mistakes.classic_attention(q, k, v, mask)
    reference = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(found["reference"][0].nan_to_num(0.0), reference.nan_to_num(0.0))
    unscaled = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
    torch.testing.assert_close(found["no_scale"][0].nan_to_num(0.0), unscaled.nan_to_num(0.0))
    assert torch.allclose(found["softmax_axis"][1].nan_to_num(0.0).sum(-2), torch.ones(2, 5))
    assert not found["inverted_mask"][1].nan_to_num(0.0)[:, mask].any()
