"""What a submitted notebook is, read here before any of it runs: its JSON, and what the
instructor should know about it (notes).

``read_notebook`` reads the bytes as a notebook (a UTF-8 byte-order mark, which Windows editors
write, is read as one); ``inspect_submission`` compares it with the notebook as handed out
(check cells deleted, locked cells edited: line endings compared as line endings, so a notebook
saved on Windows is not "edited") and notes every way a cell refers to the grader's internals.
Both run under the notebook's one deadline (``deadline``): a notebook of 20,000 cells costs its
own time limit, not the class's. ``Notes`` keeps each kind of note once, and at most
``MAX_NOTES_PER_KIND`` of a kind ("... and N more").

Nothing here runs the student's code (``grading.worker`` runs it in the sandbox).
"""
from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass, field

import nbformat

from grading.sandbox import SubmissionTimeout

NOTE_KINDS = ("duplicate", "tampering", "sandbox", "limits", "errors", "other")
MAX_NOTES_PER_KIND = 20  # a notebook that triggers thousands of notes gets "... and N more"

# Names in a notebook that only make sense as an attempt on the grader (they cannot work now).
TAMPER_MARKERS = {
    "exercise_checks": "the check helpers",
    "mha.course.checks": "the check helpers",
    "TestCaseResult": "otter's test results",
    "otter.test_files": "otter's test runner",
    "otter.run": "otter's grader",
    "grading/": "the grader's files",
    "autograder": "the grader's files",
    "/proc/": "other processes",
    "os.kill": "other processes",
    "killpg": "other processes",
    "os.fork": "other processes",
    "gc.get_objects": "the interpreter's objects",
}


# Ways of reaching a name without writing it (``importlib.import_module("mha.course." + x)``,
# ``getattr(module, name)``, ``sys.modules[...]``): with a grader's word anywhere in the cell,
# they are noted too.
DYNAMIC_ACCESS = ("importlib", "__import__", "sys.modules", "getattr", "globals", "vars",
                  "builtins", "exec", "eval", "compile")
GRADER_WORDS = ("checks", "otter", "grading", "autograder", "testcase", "run_test", "sandbox",
                "grader")


# Ways of running code that the recorder of the bans by behaviour does not see (grading/README.md,
# "What the sandbox does not cover"): another thread or process, a function reached without a
# Python frame of its own, code compiled under a file name of the cell's choosing (a library's,
# which the recorder takes for the library). The grader notes them for the instructor.
UNSEEN_BY_THE_BANS = {
    "threading": "starts a thread",
    "_thread": "starts a thread",
    "concurrent.futures": "runs work in a pool of threads or processes",
    "multiprocessing": "runs work in other processes",
    "methodcaller": "calls through operator.methodcaller",
    "compile": "compiles code under a file name it chooses",
    "CodeType": "builds a code object",
    "co_filename": "sets a code object's file name",
}


def _cell_words(source: str) -> tuple[set[str], set[str]]:
    """(dotted names the cell imports or uses, strings it builds) of a cell's code: imports
    resolved to full names (``from mha.course import checks as c`` -> ``mha.course.checks``),
    attribute chains, string constants and concatenations of them."""
    import ast

    names, strings = set(), set()
    tree = ast.parse(source)

    def constant(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = constant(node.left), constant(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.JoinedStr):
            return "".join(constant(v) or "" for v in node.values
                           if not isinstance(v, ast.FormattedValue))
        return None

    def dotted(node):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            return f"{base}.{node.attr}" if base else node.attr
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(f"{node.module or ''}.{alias.name}".lstrip(".") for alias in node.names)
        elif isinstance(node, (ast.Attribute, ast.Name)):
            name = dotted(node)
            if name:
                names.add(name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "join":
            parts = [constant(e) for e in getattr(node.args[0], "elts", [])] if node.args else []
            if parts and all(p is not None for p in parts):
                strings.add("".join(parts))
        text = constant(node) if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr)) \
            else None
        if text:
            strings.add(text)
    return names, strings


def tamper_markers(source: str) -> list[tuple[str, str]]:
    """``(marker, what it is)`` for every way the cell refers to the grader's internals:
    written out (``mha.course.checks``), imported under another name, built from pieces
    (``"mha.course." + "checks"``), or reached dynamically (importlib, getattr, sys.modules)
    in a cell that names one of the grader's words."""
    found = [(marker, what) for marker, what in TAMPER_MARKERS.items() if marker in source]
    try:
        names, strings = _cell_words(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return found
    everything = " ".join(sorted(names | strings))
    for marker, what in TAMPER_MARKERS.items():
        if (marker, what) not in found and marker in everything:
            found.append((marker, what))
    dynamic = sorted({d for d in DYNAMIC_ACCESS if any(n == d or n.startswith(d + ".")
                                                       or n.endswith("." + d) for n in names)
                      or (d == "sys.modules" and "sys.modules" in everything)})
    words = sorted({w for w in GRADER_WORDS if w in everything.lower()})
    if dynamic and words and not found:
        found.append((dynamic[0], f"a dynamic lookup, in a cell that names "
                                  f"{', '.join(words)}: the grader's names"))
    return found


def unseen_by_the_bans(source: str) -> list[str]:
    """What the cell does that the bans by behaviour cannot see (``UNSEEN_BY_THE_BANS``), read
    from the names it imports or uses and its keyword arguments (``code.replace(co_filename=...)``);
    ``compile`` only as the built-in (``re.compile`` is not one)."""
    try:
        names, _ = _cell_words(source)
        keywords = {k.arg for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
                    for k in node.keywords if k.arg}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names |= keywords

    def used(marker: str) -> bool:
        if marker == "compile":
            return bool(names & {"compile", "builtins.compile"})
        return any(n == marker or n.startswith(marker + ".") or n.endswith("." + marker)
                   for n in names)
    return [what for marker, what in UNSEEN_BY_THE_BANS.items() if used(marker)]


@dataclass
class Notes:
    """The notes of one notebook, in the order they came, each once; past
    ``MAX_NOTES_PER_KIND`` of a kind only counted (``items`` ends with "... and N more")."""
    kept: list[tuple[str, str]] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    dropped: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, text: str) -> None:
        text = " ".join(str(text).split())[:400]  # one line: notes are joined by newlines
        if (kind, text) in self.seen:
            return
        self.seen.add((kind, text))
        if sum(k == kind for k, _ in self.kept) < MAX_NOTES_PER_KIND:
            self.kept.append((kind, text))
        else:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1

    @property
    def items(self) -> list[tuple[str, str]]:
        return self.kept + [(kind, f"... and {n} more {kind} notes like these")
                            for kind, n in self.dropped.items()]


def first_line(source: str, width: int = 60) -> str:
    for line in source.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= width else line[: width - 3] + "..."
    return "(empty)"


def is_check_cell(source: str) -> bool:
    """A cell that only calls ``grader.check(...)`` (or export): the tests run here instead."""
    lines = [ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return bool(lines) and all(re.fullmatch(r"grader\.(check|check_all|export)\(.*\)", ln)
                               for ln in lines)


def notebook_problem(data) -> str | None:
    """What makes parsed JSON not a notebook this grader reads (None when it is one)."""
    if not isinstance(data, dict):
        return f"the file is a JSON {type(data).__name__}, not a notebook (an object)"
    if not isinstance(data.get("metadata", {}), dict):
        return f"its metadata is a JSON {type(data['metadata']).__name__}, not an object"
    cells = data.get("cells")
    if not isinstance(cells, list):
        return "it has no list of cells"
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("metadata", {}), dict) \
                or not isinstance(cell.get("source", ""), (str, list)):
            return f"cell {number} is not a notebook cell"
    return None


class NotANotebook(ValueError):
    """Parsed JSON that is not a notebook this grader reads (the message says why)."""


def read_notebook(raw: bytes):
    """The notebook in ``raw`` (nbformat 4). A byte-order mark at the start is read as what it
    is, not as text. Raises ``NotANotebook`` for JSON that is not a notebook this grader reads,
    and ValueError (or RecursionError) for bytes that are not JSON."""
    text = raw.decode("utf-8-sig")
    problem = notebook_problem(json.loads(text))
    if problem:
        raise NotANotebook(problem)
    return nbformat.reads(text, as_version=4)


def same_code(source: str) -> str:
    """``source`` as compared with the handed-out notebook: a line ending is a line ending
    (Windows' ``\\r\\n``, old Macs' ``\\r``), and blank space around the cell does not count."""
    return re.sub(r"\r\n?", "\n", source).strip()


def _in_time(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() >= deadline:
        raise SubmissionTimeout("the time limit of the whole submission was reached")


def inspect_submission(nb, exercise, notes: Notes, deadline: float | None = None) -> None:
    """Differences from the distributed notebook, and references to the grader's internals.
    Past ``deadline`` it stops with ``SubmissionTimeout``."""
    declared = nb.metadata.get("mha_course", {}).get("exercise")
    if declared and declared != exercise.name:
        notes.add("other", f"the notebook says it is {declared}, but it was graded as "
                           f"{exercise.name}")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    for question in exercise.manifest["questions"]:
        _in_time(deadline)
        if not any(f'grader.check("{question}")' in s or f"grader.check('{question}')" in s
                   for s in code):
            notes.add("tampering", f"the check cell of {question} was deleted or edited (its "
                                   f"tests ran anyway)")
    distributed = exercise.handed_out(nb)
    sources = {same_code(c.source) for c in nb.cells}
    handed_out = set()
    if distributed is not None:
        for cell in distributed.cells:
            handed_out.add(same_code(cell.source))
            if cell.metadata.get("editable", True) or cell.cell_type != "code":
                continue
            if "grader.check(" in cell.source:
                continue  # reported above
            if same_code(cell.source) not in sources:
                notes.add("tampering", f"a locked cell was edited or deleted: "
                                       f"`{first_line(cell.source)}`")
    for index, cell in enumerate(nb.cells):
        _in_time(deadline)
        if cell.cell_type != "code" or same_code(cell.source) in handed_out:
            continue
        for marker, what in tamper_markers(cell.source):
            notes.add("tampering", f"cell {index + 1} refers to `{marker}` ({what}): it ran "
                                   f"in the sandbox, where it cannot reach the grader")
        unseen = unseen_by_the_bans(cell.source)
        if unseen:
            notes.add("other", f"cell {index + 1} {', '.join(dict.fromkeys(unseen))}: the record "
                               f"of what a call executed (the bans by behaviour) does not see work "
                               f"done that way; where a question bans a function, read this cell")
