"""Hints that teach (issue 20): a hint names the mistake and the idea to check, never the
expression that fixes it.

How it is decided: the code tokens of a hint (English and Chinese) are compared with those of the
exercise's reference solutions (the lines between ``# BEGIN SOLUTION NO PROMPT`` and
``# END SOLUTION`` of its master, comments and strings left out). A hint fails when it holds a run
of ``N`` tokens of a solution line that contains an operator, a bracket or an attribute dot
(``tril(diagonal=S - L)``, ``index // V``, ``x.var(dim=-1, unbiased=False)``,
``torch.multinomial``), unless the learner's own notebook already shows that run (in a
question's text or in the given code): repeating the question is not giving the answer away.
The hints read are the catalogue's (``mha/course/mistakes``) and those the test files still
write themselves (a ``(candidate, hint)`` pair, an ``error_hints`` pair, a ``CheckFailed`` text).
"""
from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from mha.course import mistakes

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "grading" / "masters"
N = 3
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|//|\*\*|==|!=|<=|>=|->|[-+*/%@<>=~&|^()\[\]{}.,:]")
WORD = re.compile(r"[A-Za-z_0-9]")
SHAPE = re.compile(r"\[[\d, ]*\]")  # a shape the message describes, `tokens [2, 7]`: not code


def runs(tokens: list[str]) -> set[tuple[str, ...]]:
    """The runs of N tokens that are code: at least one operator, bracket or dot, and a name."""
    found = set()
    for i in range(len(tokens) - N + 1):
        run = tuple(tokens[i:i + N])
        if any(not WORD.match(t) and t not in ",:" for t in run) and any(t[0].isalpha() or t[0] == "_" for t in run):
            found.add(run)
    return found


def code_runs(source: str) -> set[tuple[str, ...]]:
    """Runs of a piece of Python, comments and strings cut out (they end a run)."""
    found, segment = set(), []
    skip = {tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in skip:
                found |= runs(segment)
                segment = []
            else:
                segment.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return found | runs(segment)


def solution_runs(exercise: str) -> set[tuple[str, ...]]:
    nb = json.loads((MASTERS / f"{exercise}.ipynb").read_text(encoding="utf-8"))
    found = set()
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        for part in re.findall(r"# BEGIN SOLUTION NO PROMPT\n(.*?)# END SOLUTION", source, re.S):
            found |= code_runs(part)
    return found


def shown_runs(exercise: str) -> set[tuple[str, ...]]:
    """What the learner's notebook already shows: its Markdown and its code cells."""
    nb = json.loads((ROOT / "exercises" / exercise / f"{exercise}.ipynb").read_text(encoding="utf-8"))
    found = set()
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        found |= runs(TOKEN.findall(source)) if cell["cell_type"] == "markdown" else code_runs(source)
    return found


def _text(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def written_hints(path: Path) -> set[str]:
    """The hints a test file writes itself."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple) and len(node.elts) == 2 and _text(node.elts[1]) is not None:
            found.add(_text(node.elts[1]))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "CheckFailed" and node.args \
                and _text(node.args[0]) is not None:
            found.add(_text(node.args[0]))
    return found


def hints_of(exercise: str) -> dict[str, str]:
    """hint -> where it is written."""
    found = {}
    for question, entries in mistakes.catalogue(exercise).items():
        for name, entry in entries.items():
            for language in ("en", "zh"):
                found[entry[language]] = f"mha/course/mistakes/{exercise[:4]}.py {question} {name} ({language})"
    for path in sorted((ROOT / "grading" / "autograder" / exercise / "tests").glob("q*.py")):
        for hint in written_hints(path):
            found.setdefault(hint, path.relative_to(ROOT).as_posix())
    return found


EXERCISES = sorted(p.stem for p in MASTERS.glob("ex*.ipynb"))


@pytest.mark.parametrize("exercise", EXERCISES)
def test_no_hint_holds_solution_code_the_notebook_does_not_show(exercise):
    giveaway = solution_runs(exercise) - shown_runs(exercise)
    problems = []
    for hint, where in hints_of(exercise).items():
        found = set().union(*(runs(TOKEN.findall(part)) for part in SHAPE.split(hint))) & giveaway
        if found:
            problems.append(f"{where}: {hint!r}\n    gives away: " + "; ".join(" ".join(r) for r in sorted(found)))
    assert not problems, f"{len(problems)} hint(s) give the answer away:\n" + "\n".join(problems)


def test_the_reader_finds_a_giveaway_and_passes_an_idea():
    solution = code_runs("mask = torch.ones(L, S).tril(diagonal=S - L)  # the last L rows\n")
    assert runs(TOKEN.findall("shift it: tril(diagonal=S - L).")) & solution
    assert not runs(TOKEN.findall("the L queries are the last L of the S positions.")) & solution
    assert not code_runs("x = 1  # tril(diagonal=S - L)\n") & solution
