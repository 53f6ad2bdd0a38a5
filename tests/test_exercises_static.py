"""The graded exercises' files: generated from their masters, complete, and free of solutions.

Fast checks (no notebook is executed here): the student notebooks, public tests and
autograder files are what ``python -m grading.assign`` makes from the masters in
``grading/masters/`` (nobody edited a master without regenerating, or a generated file by
hand); each student notebook has the title, the Colab setup cell, a check cell and points
for every question; no solution line and no hidden test reaches the students; the setup
cell fetches the right files from the right place; and the feedback helpers say what they
should.
"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
import time
import types
from pathlib import Path
from unittest import mock

import nbformat
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grading import assign  # noqa: E402
from mha.course import checks as ec  # noqa: E402

MASTERS = sorted(p.stem for p in (ROOT / "grading" / "masters").glob("ex*.ipynb"))
CAPSTONE = "ex15_capstone"
BRIEF_SETUP = '''\
# Setup: on Google Colab (or wherever MHA_COURSE_SOURCE is set) install the course package `mha`.
import os, subprocess, sys
if "google.colab" in sys.modules or "MHA_COURSE_SOURCE" in os.environ:
    source = os.environ.get("MHA_COURSE_SOURCE", "git+https://github.com/mha-course/multi-head-attention")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", source], check=True)'''


def student_path(exercise: str) -> Path:
    return ROOT / "exercises" / exercise / f"{exercise}.ipynb"


def manifest(exercise: str) -> dict:
    return json.loads((ROOT / "grading" / "autograder" / exercise / "manifest.json").read_text())


def public_files(exercise: str) -> list[str]:
    tests = sorted((ROOT / "exercises" / exercise / "tests").glob("q*.py"),
                   key=lambda p: int(p.stem[1:]))
    return [f"tests/{p.name}" for p in tests]


# Chapters whose exercise is still to be written (none now: chapter 16's is exercise 17).
CHAPTERS_WITHOUT_EXERCISE_YET: set[int] = set()


def test_one_master_per_chapter_and_masters_outside_nbval_and_the_book():
    # Chapters 1-14 have exercises 1-14; the capstone, exercise 15, builds on chapters 11-14;
    # a later chapter N has exercise N + 1. No exercise exists without its chapter.
    numbers = sorted(int(m.split("_")[0][2:]) for m in MASTERS if m != CAPSTONE)
    chapters = sorted(int(p.name[:2]) for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    capstone = int(CAPSTONE[2:4])
    expected = [c if c < capstone else c + 1 for c in chapters if c not in CHAPTERS_WITHOUT_EXERCISE_YET]
    assert numbers == expected and len(numbers) >= 14
    assert CAPSTONE in MASTERS and capstone == 15
    toc = (ROOT / "_toc.yml").read_text()
    for exercise in MASTERS:
        assert f"file: exercises/{exercise}/{exercise}\n" in toc, exercise
    # nbval collects chapters/ and exercises/; the book only builds _toc.yml's files.
    assert not list((ROOT / "exercises").rglob("*master*"))
    toc = (ROOT / "_toc.yml").read_text()
    assert "grading/" not in toc


@pytest.mark.parametrize("exercise", MASTERS)
def test_generated_files_are_up_to_date(exercise):
    m = manifest(exercise)
    master = ROOT / "grading" / "masters" / f"{exercise}.ipynb"
    hint = f"run `python -m grading.assign {exercise}` and commit what it changes"
    assert m["master_sha256"] == assign.sha256_bytes(master.read_bytes()), \
        f"{master.name} changed since the exercise was generated: {hint}"
    assert m["generated"] == assign.generated_digests(exercise), \
        f"generated files of {exercise} were edited by hand or are stale: {hint}"


@pytest.mark.parametrize("exercise", MASTERS)
def test_student_notebook_structure(exercise):
    nb = nbformat.read(student_path(exercise), as_version=4)
    assert nb.metadata.kernelspec == {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    title = first.source.splitlines()[0]
    assert re.fullmatch(r"# Exercise \d+: .+", title), title
    assert re.fullmatch(r"\*Estimated time: about \d+ minutes\.\*", first.source.splitlines()[2])
    assert manifest(exercise)["title"] == title[2:]
    code = [c for c in nb.cells if c.cell_type == "code"]
    setup = code[0].source
    assert setup.startswith(BRIEF_SETUP + "\n"), "the setup cell must start with the course's 5 lines"
    assert setup == assign.setup_cell_source(exercise, public_files(exercise))
    assert 'grader = Notebook(tests_dir="tests")' in code[1].source
    assert "from mha.course.checks import Notebook" in code[1].source
    # every question: a heading with its points, then (later) its check cell, in order
    questions = manifest(exercise)["questions"]
    headings = [c.source.splitlines()[0] for c in nb.cells
                if c.cell_type == "markdown" and c.source.startswith("## Question")]
    assert len(headings) == len(questions)
    for heading, (name, points) in zip(headings, questions.items()):
        assert heading.startswith(f"## Question {name[1:]}:"), heading
        unit = "point" if points == 1 else "points"
        assert heading.endswith(f"({points:g} {unit})"), heading
    checks = [c.source.strip() for c in code if c.source.startswith("grader.check(")]
    assert checks == [f'grader.check("{q}")' for q in questions]
    total = f"| | **Total** | | **{manifest(exercise)['total']:g}** |"  # the Kind column is empty
    assert total in first.source
    # the chapter is linked on the published book: nothing sits next to a downloaded copy
    links = re.findall(r"\]\(([^)]+)\)", first.source)
    chapters = [link for link in links if link.startswith(assign.book_url() + "chapters/")]
    assert chapters, "the intro links to its chapter in the published book"
    for link in chapters:
        page = link.removeprefix(assign.book_url()).removesuffix(".html")
        assert (ROOT / f"{page}.ipynb").is_file(), link
    assert "../" not in "".join(links)


@pytest.mark.parametrize("exercise", MASTERS)
def test_stored_outputs_show_failing_checks_and_no_errors(exercise):
    nb = nbformat.read(student_path(exercise), as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert cell.execution_count is not None, "the student notebook is stored executed"
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:80]
        if cell.source.startswith("grader.check("):
            text = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
            assert "Test case failed" in text, text[:500]
            assert "returned None" in text or "is None" in text, text[:500]
            # the feedback shows the input, expected vs got and a hint, not the test's source
            assert "Error at line" not in text and "check_tensor(" not in text, text[:500]
            html = "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)
            assert "color: red" not in html, "pure red fails WCAG AA contrast"


def _solution_lines(exercise: str) -> list[str]:
    """The lines between # BEGIN SOLUTION and # END SOLUTION in the master's code cells,
    except those that also occur elsewhere in the master (e.g. ``if mask is not None:``)."""
    master = nbformat.read(ROOT / "grading" / "masters" / f"{exercise}.ipynb", as_version=4)
    lines, elsewhere, inside, in_tests = [], set(), False, False
    for cell in master.cells:
        if cell.cell_type == "raw" and cell.source.strip() in ("# BEGIN TESTS", "# END TESTS"):
            in_tests = cell.source.strip() == "# BEGIN TESTS"
        if cell.cell_type != "code" or in_tests:
            continue  # test cells never reach the student notebook
        for line in cell.source.splitlines():
            if re.match(r"\s*# BEGIN SOLUTION", line):
                inside = True
            elif re.match(r"\s*# END SOLUTION", line):
                inside = False
            elif inside:
                lines.append(line.strip())
            else:
                elsewhere.add(line.strip())
    return [line for line in lines if line not in elsewhere]


@pytest.mark.parametrize("exercise", MASTERS)
def test_student_notebook_contains_no_solution(exercise):
    solution = [l for l in _solution_lines(exercise)
                if l and not l.startswith("#") and l not in {"else:", "pass"}]
    assert len(solution) >= 4, "the master marks its solutions with # BEGIN/END SOLUTION"
    nb = nbformat.read(student_path(exercise), as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    student_lines = {l.strip() for l in text.splitlines()}
    leaked = [l for l in solution if l in student_lines]
    assert not leaked, f"solution lines in the student notebook: {leaked}"
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN PROMPT", "END PROMPT",
                   "BEGIN QUESTION", "BEGIN TESTS", "ASSIGNMENT CONFIG"):
        assert marker not in text, marker
    # every answer cell is a stub that runs and returns None
    stubs = [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    assert len(stubs) == len(manifest(exercise)["questions"])
    assert all("return None" in c.source or "= None" in c.source for c in stubs)


def _cases(path: Path) -> list[tuple[str, bool]]:
    """(function source, hidden) of every test case in an otter test file."""
    tree = ast.parse(path.read_text())
    cases = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            hidden = any(k.arg == "hidden" and getattr(k.value, "value", False)
                         for d in node.decorator_list if isinstance(d, ast.Call)
                         for k in d.keywords)
            cases.append((ast.unparse(node), hidden))
    return cases


@pytest.mark.parametrize("exercise", MASTERS)
def test_public_tests_are_the_autograders_minus_the_hidden_ones(exercise):
    ag_tests = ROOT / "grading" / "autograder" / exercise / "tests"
    for question, points in manifest(exercise)["questions"].items():
        full = _cases(ag_tests / f"{question}.py")
        public = _cases(ROOT / "exercises" / exercise / "tests" / f"{question}.py")
        assert [c for c in full if not c[1]] == public
        assert any(h for _, h in full), f"{exercise} {question} has no hidden test"
        assert public and not any(h for _, h in public)
        source = (ag_tests / f"{question}.py").read_text()
        assert "all_or_nothing = True" in source and f"points = {points:g}" in source


@pytest.mark.parametrize("exercise", MASTERS)
def test_every_exercise_has_a_transfer_question_graded_by_hidden_tests(exercise):
    """A question that asks to apply an idea the chapter did not spell out (issue 14.1)."""
    nb = nbformat.read(student_path(exercise), as_version=4)
    marker = "*A question that goes beyond the chapter: no recipe, only the goal.*"
    transfer = [c.source.splitlines()[0] for c in nb.cells
                if c.cell_type == "markdown" and c.source.startswith("## Question") and marker in c.source]
    assert transfer, f"{exercise} has no transfer question"
    questions = manifest(exercise)["questions"]
    for heading in transfer:
        name = "q" + heading.split()[2].rstrip(":")
        assert name in questions


def test_capstone_training_cells_are_left_to_the_grader():
    """The capstone's notebook runs the graded training itself (so the student sees the number);
    the grader and selfcheck skip those cells (the hidden test trains with the grader's clock)."""
    from grading import selfcheck, worker

    assert worker.SKIP_TAG == selfcheck.SKIP_TAG == "skip-in-grading"
    nb = nbformat.read(student_path(CAPSTONE), as_version=4)
    training = [c for c in nb.cells if c.cell_type == "code" and "train_and_evaluate(" in c.source]
    assert training and all(worker.SKIP_TAG in c.metadata.get("tags", []) for c in training)
    assert (CAPSTONE, "q5") in selfcheck.SLOW_QUESTIONS


@pytest.mark.parametrize("exercise", ["ex06_norms", "ex07_decoding"])
def test_intro_promises_only_what_the_hidden_tests_do(exercise):
    intro = nbformat.read(student_path(exercise), as_version=4).cells[0].source
    assert "L \\neq S" not in intro and "queries and keys of different lengths" not in intro


def test_ex07_feedback_uses_the_notebooks_token_ids():
    nb = nbformat.read(student_path("ex07_decoding"), as_version=4)
    assert any("PAD, BOS, EOS = 0, 1, 2" in c.source for c in nb.cells)
    q3 = next(c for c in nb.cells if c.source.strip() == 'grader.check("q3")')
    text = "".join(o.get("data", {}).get("text/plain", "") for o in q3.outputs)
    assert "bos_id=1, eos_id=2, pad_id=0" in text, text


def test_ex08_hidden_test_tells_tiling_from_interleaving():
    """Several key/value heads: k.repeat (tiling) fails the hidden test, not only the public one."""
    def tiles(k, group):
        return k.repeat(1, group, 1, 1)

    path = ROOT / "grading" / "autograder" / "ex08_heads" / "tests" / "q3.py"
    _, results = ec.run_test_file(path, {"repeat_kv": tiles})
    hidden = [r for r in results if r.hidden]
    assert hidden and not any(r.passed for r in hidden), [r.message for r in hidden]
    _, results = ec.run_test_file(path, {"repeat_kv": lambda k, group: k.repeat_interleave(group, dim=1)})
    assert all(r.passed for r in results)


def test_check_cell_feedback_is_the_check_message_only(tmp_path):
    """What a check cell shows: the failed check's message (input, expected vs got, hint)."""
    test_file = tmp_path / "q1.py"
    test_file.write_text(
        "from otter.test_files import test_case\nOK_FORMAT = False\nname = 'q1'\npoints = 1\n"
        "@test_case(points=None, hidden=False)\ndef test_double(double):\n"
        "    import torch\n    from mha.course.checks import call, check_tensor\n"
        "    x = torch.arange(3.0)\n"
        "    check_tensor(call(double, 'double', x=x), 2 * x, 'double(arange(3))', [(x + x + 1, 'off by one')])\n")
    result = ec.Notebook(tests_dir=str(tmp_path)).check("q1", env={"double": lambda x: 2 * x + 1})
    text = repr(result)
    assert text.startswith("q1 results:") and "Test case failed" in text
    assert "double(arange(3)): wrong values at 3 of 3 positions" in text and "Hint: off by one" in text
    assert "Error at line" not in text and "check_tensor(" not in text and "CheckFailed" not in text
    assert "#a50e0e" in result._repr_html_()
    passed = ec.Notebook(tests_dir=str(tmp_path)).check("q1", env={"double": lambda x: 2 * x})
    assert repr(passed) == "q1 results: All test cases passed!"


def test_check_raises_wants_the_error():
    def accepts(x):
        return x

    def refuses(x):
        raise ValueError("no")
    ec.check_raises(refuses, "f", ValueError, x=1)
    assert "should raise ValueError (why); it returned 1" in _fails(ec.check_raises, accepts, "f", ValueError, x=1, why="why")


def test_solutions_command_gives_every_solution_with_its_tests(tmp_path):
    from grading import solutions

    written = solutions.write_solutions(tmp_path)
    assert [p.parent.name for p in written] == MASTERS
    for path in written:
        exercise = path.parent.name
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert all(line in text for line in _solution_lines(exercise)), exercise
        tests = sorted(p.name for p in (path.parent / "tests").glob("q*.py"))
        assert tests == [f"{q}.py" for q in sorted(manifest(exercise)["questions"])]
    assert not (ROOT / "exercises" / "solutions").exists()


def test_feedback_helpers_come_from_the_installed_package_only():
    """One copy of the checks: mha.course.checks, imported by every test file."""
    copies = [p for p in ROOT.rglob("exercise_checks.py") if ".venv" not in p.parts]
    assert copies == []
    for tests in [*ROOT.glob("exercises/*/tests"), *ROOT.glob("grading/autograder/*/tests")]:
        for path in tests.glob("q*.py"):
            source = path.read_text()
            assert "from mha.course.checks import" in source, path
            assert "exercise_checks" not in source, path


# ------------------------------------------------------------------ the setup cell's fetch

def _run_setup(exercise, tmp_path, modules, environ, find_spec=None):
    """Run the exercise's setup cell in `tmp_path` with pip and the network stubbed out."""
    cell = assign.setup_cell_source(exercise, public_files(exercise))
    pip, downloads = [], []

    def fake_urlretrieve(url, filename):
        downloads.append((url, filename))
        Path(filename).write_text("# downloaded\n")

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with mock.patch.dict(sys.modules, modules), \
                mock.patch.dict(os.environ, environ, clear=True), \
                mock.patch("subprocess.run", side_effect=lambda cmd, **kw: pip.append(cmd)), \
                mock.patch("urllib.request.urlretrieve", side_effect=fake_urlretrieve), \
                mock.patch("importlib.util.find_spec", side_effect=find_spec or (lambda name: None)):
            exec(compile(cell, "<setup cell>", "exec"), {})
    finally:
        os.chdir(cwd)
    return pip, downloads


def test_setup_cell_on_colab_fetches_from_github(tmp_path):
    colab = {"google.colab": types.ModuleType("google.colab")}
    pip, downloads = _run_setup("ex03_masking", tmp_path, colab, {})
    assert [cmd[-1] for cmd in pip] == ["git+https://github.com/mha-course/multi-head-attention",
                                        "otter-grader==7.0.0"]
    raw = "https://raw.githubusercontent.com/mha-course/multi-head-attention/main/exercises/ex03_masking"
    assert downloads == [(f"{raw}/{name}", name) for name in public_files("ex03_masking")]
    assert (tmp_path / "tests" / "q1.py").exists()


def test_setup_cell_follows_a_fork_and_a_branch(tmp_path):
    pip, downloads = _run_setup(
        "ex01_self_attention", tmp_path, {},
        {"MHA_COURSE_SOURCE": "git+https://github.com/someone/fork.git@fix-masks"},
        find_spec=lambda name: object())  # otter already installed: not reinstalled
    assert [cmd[-1] for cmd in pip] == ["git+https://github.com/someone/fork.git@fix-masks"]
    assert downloads[0] == ("https://raw.githubusercontent.com/someone/fork/fix-masks/"
                            "exercises/ex01_self_attention/tests/q1.py", "tests/q1.py")


def test_setup_cell_copies_from_a_local_checkout(tmp_path):
    for source in (str(ROOT), f"file://{ROOT}", f"git+file://{ROOT}"):
        folder = tmp_path / re.sub(r"\W", "_", source)
        folder.mkdir()
        _, downloads = _run_setup("ex07_decoding", folder, {}, {"MHA_COURSE_SOURCE": source})
        assert downloads == []
        for name in public_files("ex07_decoding"):
            assert (folder / name).read_bytes() == (ROOT / "exercises" / "ex07_decoding" / name).read_bytes()


def test_setup_cell_does_nothing_elsewhere(tmp_path):
    pip, downloads = _run_setup("ex01_self_attention", tmp_path, {}, {})
    assert pip == [] and downloads == [] and list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the feedback helpers

def _fails(fn, *args, **kwargs) -> str:
    with pytest.raises(ec.CheckFailed) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_check_tensor_says_what_is_wrong():
    expected = torch.arange(6.0).view(2, 3)
    assert "returned None" in _fails(ec.check_tensor, None, expected, "f(x)")
    message = _fails(ec.check_tensor, torch.zeros(3, 2), expected, "f(x)")
    assert "wrong shape, expected [2, 3], got [3, 2]" in message
    got = expected.clone()
    got[1, 2] = 9.5
    message = _fails(ec.check_tensor, got, expected, "f(x)")
    assert "wrong values at 1 of 6 positions" in message
    assert "Largest error 4.5000 at index [1, 2]: expected 5.0000, got 9.5000" in message
    got[0, 1] = float("nan")
    assert "NaN at 1 of 6 positions, the first at [0, 1]" in _fails(ec.check_tensor, got, expected, "f")
    message = _fails(ec.check_tensor, expected // 2, expected / 2, "f", [(expected // 2, "use /")])
    assert message.endswith("Hint: use /")
    ec.check_tensor(expected + 1e-7, expected, "f")  # within tolerance: passes


def test_check_tensor_on_masks():
    mask = torch.ones(3, 3, dtype=torch.bool).tril()
    message = _fails(ec.check_tensor, ~mask, mask, "causal_mask(3)", [(~mask, "inverted")])
    assert "the first is [0, 0]: expected True, got False" in message and "Hint: inverted" in message
    assert "expected a boolean tensor" in _fails(ec.check_tensor, mask.float(), mask, "m")


def test_call_reports_errors_timeouts_and_undefined_names(monkeypatch):
    assert "is not defined" in _fails(ec.call, None, "attention", q=torch.zeros(1))

    import linecache

    cell = "def broken(q):\n    return q @ torch.zeros(5, 5)\n"  # a learner's cell, as IPython runs it
    linecache.cache["<cell 1>"] = (len(cell), None, cell.splitlines(True), "<cell 1>")
    namespace = {"__name__": "__main__", "torch": torch}
    exec(compile(cell, "<cell 1>", "exec"), namespace)
    broken = namespace["broken"]
    message = _fails(ec.call, broken, "broken", error_hints=[("cannot be multiplied", "hint!")],
                     q=torch.zeros(2, 3))
    assert message.startswith("broken(q tensor [2, 3]) raised RuntimeError")
    assert "return q @ torch.zeros(5, 5)" in message and "Hint: hint!" in message

    def loops():
        while True:
            pass
    monkeypatch.setattr(ec, "TIME_LIMIT", 0.3)
    started = time.monotonic()
    assert "did not finish within 0.3 s" in _fails(ec.call, loops, "loops")
    assert time.monotonic() - started < 5


def test_in_your_code_quotes_the_learners_line_never_the_tests_or_the_librarys(tmp_path):
    import mha

    import linecache

    namespace = {"__name__": "__main__", "mha": mha}
    cell = ("def learner(q, helper):\n    return helper(q)\n"
            "def masked(q):\n    return mha.scaled_dot_product_attention(q, q, q, 'not a mask')\n")
    linecache.cache["<cell 3>"] = (len(cell), None, cell.splitlines(True), "<cell 3>")  # as IPython does
    exec(compile(cell, "<cell 3>", "exec"), namespace)
    test_file = tmp_path / "tests" / "q1.py"
    test_file.parent.mkdir()
    test_file.write_text("helper = lambda q: q @ q.new_zeros(9, 9)\n")
    test_namespace = {}
    exec(compile(test_file.read_text(), str(test_file), "exec"), test_namespace)
    message = _fails(ec.call, namespace["learner"], "learner", torch.zeros(2, 3), test_namespace["helper"])
    assert "in your code, function learner: `return helper(q)`" in message, message
    assert "q.new_zeros" not in message
    message = _fails(ec.call, namespace["masked"], "masked", torch.zeros(2, 3))
    assert "function masked:" in message and "check_mask" not in message, message


def test_forbid_and_reference():
    def uses_builtin(s):
        return torch.softmax(s, -1)

    def by_hand(s):
        e = torch.exp(s - s.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)
    assert "uses `softmax`" in _fails(ec.forbid, uses_builtin, "softmax", {"softmax": "no"})
    ec.forbid(by_hand, "softmax", {"softmax": "no"})
    env = {"f": 1}
    with ec.reference(env, f=2, g=3):
        assert env == {"f": 2, "g": 3}
    assert env == {"f": 1}
