"""The instructor command grades a hostile class exactly (issue 15).

One run of ``python -m grading.grade`` on a class of exercise 1 submissions: correct and one-bug
notebooks, notebooks that crash, loop, print megabytes, exhaust memory, fork, exit or swallow
every exception, and notebooks that attack the grader: patching the check helpers or otter's
results, reading the hidden tests and the solutions, writing into the grader's files and into
other students' submissions, killing the grading command. Each student must get exactly the
points of their own correct answers, every row must say what happened, and nothing outside the
sandboxes may change.
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

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # grading.known_bugs, grading.selfcheck
from grading.grade import file_name  # noqa: E402  (feedback/<name>-<hash>.md)
EXERCISE = "ex01_self_attention"
AUTOGRADER = ROOT / "grading" / "autograder" / EXERCISE
SOLUTION = AUTOGRADER / f"{EXERCISE}-solution.ipynb"
LIMITS = {"timeout": 150, "cell_timeout": 10, "check_time_limit": 3}
POINTS = json.loads((AUTOGRADER / "manifest.json").read_text())["questions"]  # {"q1": 2.0, ...}
LAST = list(POINTS)[-1]  # cells added "at the end" go after this question's check cell
KINDS = ("duplicate", "tampering", "sandbox", "limits", "errors", "other")
# Files a submission must not be able to change (the grader's live files and the hidden tests).
LIVE = [ROOT / "mha" / "course" / "checks" / "running.py", AUTOGRADER / "tests" / "q1.py",
        ROOT / "grading" / "worker.py", SOLUTION]


def _solution():
    return nbformat.read(SOLUTION, as_version=4)


def _bug(question: str, words: str):
    """The solution with the known bug of ``question`` whose description has ``words``
    (grading/known_bugs.py: kept in step with the solutions by the exercises' author)."""
    from grading.known_bugs import BUGS
    from grading.selfcheck import apply_bug

    entry = next(b for b in BUGS[EXERCISE] if b[0] == question and words in b[1])
    return apply_bug(_solution(), entry[2])


def _replace(nb, old: str, new: str) -> None:
    cell = next(c for c in nb.cells if c.cell_type == "code" and old in c.source)
    cell.source = cell.source.replace(old, new)


def _after(nb, question: str, *sources: str) -> None:
    """Insert code cells right after the check cell of ``question``."""
    index = next(i for i, c in enumerate(nb.cells)
                 if c.source.strip() == f'grader.check("{question}")') + 1
    nb.cells[index:index] = [nbformat.v4.new_code_cell(s) for s in sources]


def _define(nb, name: str, source: str) -> None:
    """Replace the answer cell that defines ``name``."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(f"def {name}("))
    cell.source = source


LOOPS_WHEN_CALLED = """def attention_scores(q, k):
    d_k = q.shape[-1]
    while d_k > 0:
        d_k = d_k + 1
"""
SWALLOWS_WHEN_CALLED = """def attention_scores(q, k):
    import time
    while True:
        try:
            time.sleep(1000)
        except BaseException:
            pass
"""
SWALLOWING_CELL = """import time
while True:
    try:
        time.sleep(1000)
    except BaseException:
        pass
"""
ALL = set(POINTS)
FLOOD_CELL = """import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    os.write(1, b"x" * 65536)
"""
FORMULA = '=HYPERLINK("evil.example.com","click")'  # (a file name: no slash)


def _build_class(subs: Path) -> dict[str, set[str]]:
    """Write the class into ``subs``; return the questions each student must get right."""
    expected = {}

    def save(name: str, nb, right: set[str], folder: bool = False) -> None:
        path = subs / name / f"{EXERCISE}.ipynb" if folder else subs / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        expected[name] = right

    save("alice", _solution(), ALL)

    save("bob", _bug("q1", "floor division"), ALL - {"q1"})  # the classic // bug

    carol = _bug("q3", "element-wise")  # a wrong q3; raises and calls sys.exit
    _after(carol, "q2", 'raise ValueError("oops")', "import sys\nsys.exit(1)")
    save("carol", carol, ALL - {"q3"})

    dave = _solution()  # question 1 loops when called; one cell loops at top level
    _define(dave, "attention_scores", LOOPS_WHEN_CALLED)
    _after(dave, "q3", "while True:\n    pass")
    save("dave", dave, ALL - {"q1"})

    # erin forgot the scaling, then "fixed" her checks: deleted one check cell, turned another
    # into a print, replaced grader.check, put her own tests next to the notebook, and printed
    # 5 MB. Graded with the real tests: loses question 1 only.
    erin = _bug("q1", "scaling")
    erin.cells = [c for c in erin.cells if c.source.strip() != 'grader.check("q2")']
    _replace(erin, 'grader.check("q1")', 'print("q1 passed!")')
    erin.cells.insert(3, nbformat.v4.new_code_cell(
        'grader.check = lambda question: print(question, "passed!")\nprint("x" * 5_000_000)'))
    save("erin", erin, ALL - {"q1"}, folder=True)
    (subs / "erin" / "tests").mkdir()
    (subs / "erin" / "tests" / "q1.py").write_text('OK_FORMAT = False\nname = "q1"\npoints = 2\n')

    frank = _solution()  # ends the notebook's process right after question 1
    _after(frank, "q1", "import os\nos._exit(1)")
    save("frank", frank, ALL)

    shutil.copy(ROOT / "exercises" / EXERCISE / f"{EXERCISE}.ipynb", subs / "grace.ipynb")
    expected["grace"] = set()

    # mallory's q1 is wrong; she patches every check helper (and the old module name) to pass.
    mallory = _bug("q1", "scaling")
    _after(mallory, LAST, """import sys, types
import mha.course.checks as checks
checks.check_tensor = lambda *args, **kwargs: None
checks.check_pair = lambda got, *args, **kwargs: (got, got)
checks.call = lambda fn, name, *args, error_hints=(), **named: fn(*args, *named.values())
checks.run_test_file = lambda *args, **kwargs: None
sys.modules["exercise_checks"] = checks""")
    save("mallory", mallory, ALL - {"q1"})

    # oscar handed in the stubs, and patches otter's results to "passed" (the real otter).
    oscar = nbformat.read(ROOT / "exercises" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4)
    oscar.cells.append(nbformat.v4.new_code_cell("""import sys
sys.modules.pop("otter", None)
from otter.test_files import abstract_test
abstract_test.TestCaseResult.passed = property(lambda self: True)
abstract_test.TestFile.score = property(lambda self: 100)
abstract_test.TestFile.grade = property(lambda self: 1.0)"""))
    save("oscar", oscar, set())

    # sybil's q1 reads the hidden tests and the solutions and raises with what it found, so
    # that it would appear in her feedback.
    sybil = _solution()
    _define(sybil, "attention_scores", f"""def attention_scores(q, k):
    import glob, os
    found = []
    for root in ({str(ROOT)!r}, "/work", "/tmp", "/root", "/home"):
        try:
            found += sorted(os.listdir(root))
        except OSError as exc:
            found.append(type(exc).__name__)
    text = ""
    for path in [{str(AUTOGRADER / "tests" / "q1.py")!r}, {str(SOLUTION)!r}]:
        try:
            text += open(path).read()[:300]
        except OSError as exc:
            text += type(exc).__name__
    raise ValueError("LEAK " + " ".join(found) + " " + text)
""")
    save("sybil", sybil, ALL - {"q1"})

    # victor writes into the grader's files and into the other submissions.
    victor = _solution()
    targets = [str(p) for p in LIVE] + [str(subs / "alice.ipynb"), str(subs / "bob.ipynb")]
    _after(victor, LAST, f"""import glob
for path in {targets!r} + glob.glob("/tmp/**/*.ipynb", recursive=True):
    try:
        with open(path, "a") as f:
            f.write("\\nraise SystemExit('victor was here')\\n")
    except OSError as exc:
        print(type(exc).__name__, path)""")
    save("victor", victor, ALL)

    # walter tries to kill the grading command (and everything else).
    walter = _solution()
    _after(walter, LAST, """import os, signal, subprocess
for pid in (os.getppid(), 1, -1, 0):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as exc:
        print(pid, exc)
for pid in range(2, 4000):
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
subprocess.run(["pkill", "-9", "-f", "grading"], check=False)""")
    save("walter", walter, ALL)

    # xena swallows every exception: in a cell, and (yves) inside her question-1 function.
    xena = _solution()
    _after(xena, LAST, SWALLOWING_CELL)
    save("xena", xena, ALL)
    yves = _solution()
    _define(yves, "attention_scores", SWALLOWS_WHEN_CALLED)
    save("yves", yves, ALL - {"q1"})

    # hugo exhausts memory, prints forever and forks.
    hugo = _solution()
    _after(hugo, LAST, "huge = bytearray(50 * 2**30)", "huge = torch.empty(2**33)",
           "while True:\n    print('x' * 100_000)",
           """import os, time
if os.fork() == 0:
    time.sleep(1000)
children = 0
for _ in range(5000):
    if os.fork() == 0:
        time.sleep(1000)
        os._exit(0)
    children += 1""")
    save("hugo", hugo, ALL)

    # ivan's q3 is the library's function, imported (its source has no banned name): not his own.
    ivan = _solution()
    _define(ivan, "attention", "from mha import scaled_dot_product_attention as attention")
    save("ivan", ivan, ALL - {"q3"})

    # flo floods the output without a newline and ignores the interrupt; pia writes into a
    # pipe nobody reads (issue 21: neither may hang the class).
    flo = _solution()
    _after(flo, LAST, FLOOD_CELL)
    save("flo", flo, ALL)
    pia = _solution()
    _after(pia, LAST, "import os\nr, w = os.pipe()\nos.write(w, b'x' * 10_000_000)")
    save("pia", pia, ALL)

    # hana records the inputs of every call of her q1 and tells them in her q2's error: the
    # hidden tests' inputs must not reach a message she sees (every public test runs first).
    hana = _solution()
    scores = next(c for c in hana.cells if c.cell_type == "code"
                  and c.source.startswith("def attention_scores("))
    scores.source = scores.source.replace("def attention_scores(q, k):", (
        "SEEN = []\n\ndef attention_scores(q, k):\n    SEEN.append(tuple(q.shape))"), 1)
    _define(hana, "softmax", "def softmax(scores):\n    raise ValueError(f'SEEN {SEEN}')\n")
    save("hana", hana, ALL - {"q2"})

    # Two students whose names share no ASCII letter: two rows, each under its own name.
    save("张伟", _solution(), ALL)
    save("李娜", _bug("q1", "scaling"), ALL - {"q1"})
    # A name a spreadsheet would run as a formula: kept, escaped with a leading '.
    save(FORMULA, _solution(), ALL)

    # Files that are not notebooks this grader reads cost their own row only.
    (subs / "meta").mkdir()  # metadata is a JSON list
    (subs / "meta" / f"{EXERCISE}.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": [1, 2], "nbformat": 4, "nbformat_minor": 5}))
    expected["meta"] = set()
    (subs / "deep").mkdir()  # JSON nested 100,000 lists deep
    (subs / "deep" / f"{EXERCISE}.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    expected["deep"] = set()
    save("sparse", _solution(), ALL, folder=True)  # beside it: a 100 GB sparse file and a
    with open(subs / "sparse" / "data.bin", "wb") as f:  # 60 MB sparse "notebook"
        f.truncate(100 * 2**30)
    with open(subs / "sparse" / "old.ipynb", "wb") as f:
        f.truncate(60 * 2**20)

    # zoe handed in twice: a buggy notebook, then (later) a correct one in a folder.
    save("zoe", _bug("q1", "scaling"), ALL - {"q1"})
    save("zoe", _solution(), ALL, folder=True)
    os.utime(subs / "zoe.ipynb", (time.time() - 3600, time.time() - 3600))
    return expected


def _fingerprints(paths) -> dict[str, str]:
    def fingerprint(p: Path) -> str:
        info = p.stat()
        if info.st_size > 2**26:  # the sparse files: size and time
            return f"{info.st_size} {info.st_mtime_ns}"
        return hashlib.sha256(p.read_bytes()).hexdigest()
    return {str(p): fingerprint(p) for p in paths}


def _grade(subs: Path, out: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MHA_COURSE")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "grading.grade", str(subs), "--out", str(out), "--jobs", "2",
         "--timeout", str(LIMITS["timeout"]), "--cell-timeout", str(LIMITS["cell_timeout"]),
         "--check-time-limit", str(LIMITS["check_time_limit"]), "--memory-limit", "2048"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade the class once per test session, even when pytest-xdist spreads this module's
    tests over several workers (they share the result through a lock-protected folder)."""
    from filelock import FileLock

    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # this session's folder, common to its workers
    tmp = shared / "hostile-class"
    subs, out, state = tmp / "submissions", tmp / "results", tmp / "state.json"
    with FileLock(str(shared / "hostile-class.lock")):
        if not state.exists():
            subs.mkdir(parents=True)
            expected = _build_class(subs)
            submitted = _fingerprints(sorted(p for p in subs.rglob("*") if p.is_file()))
            done, seconds = _grade(subs, out)
            print(done.stdout[-6000:], done.stderr[-3000:])
            print(f"graded {len(expected)} students in {seconds:.0f} s")
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            state.write_text(json.dumps({"expected": {k: sorted(v) for k, v in expected.items()},
                                         "submitted": submitted}))
    saved = json.loads(state.read_text())
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return {"expected": {k: set(v) for k, v in saved["expected"].items()}, "rows": rows,
            "out": out, "subs": subs, "submitted": saved["submitted"]}


def _points(cell: str) -> float:
    return float(cell) if cell else 0.0  # a notebook that could not be read: no points


def test_every_student_gets_exactly_the_points_of_their_own_answers(graded):
    got = {name.replace("'" + FORMULA, FORMULA): {q: _points(row[f"ex01.{q}"]) for q in POINTS}
           | {"total": float(row["total"])} for name, row in graded["rows"].items()}
    want = {name: {q: (POINTS[q] if q in right else 0.0) for q in POINTS}
            | {"total": sum(POINTS[q] for q in right)}
            for name, right in graded["expected"].items()}
    assert got == want
    assert {float(row["possible"]) for row in graded["rows"].values()} == {sum(POINTS.values())}


def test_nothing_outside_the_sandboxes_changed(graded):
    subs = graded["subs"]
    assert _fingerprints(sorted(p for p in subs.rglob("*") if p.is_file())) == graded["submitted"]
    # (the live files' contents may change meanwhile in a shared work tree: look for victor's mark)
    assert not [p for p in LIVE if b"victor was here" in p.read_bytes()]


def test_clean_submissions_have_no_notes(graded):
    for name in ("alice", "bob", "grace"):
        assert all(graded["rows"][name][k] == "" for k in KINDS), graded["rows"][name]


# (student, column of grades.csv, what the note in it must say)
EXPECTED_NOTES = [
    ("carol", "errors", "raised ValueError: oops"),
    ("carol", "errors", "called sys.exit()"),
    ("dave", "limits", f"ran for more than {LIMITS['cell_timeout']} s and was interrupted"),
    ("erin", "tampering", "check cell of q1 was deleted or edited"),
    ("erin", "tampering", "check cell of q2 was deleted or edited"),
    ("erin", "tampering", "tests/q1.py"),
    ("erin", "limits", "printed 5.0 MB"),
    ("frank", "sandbox", "ended the notebook's process"),
    ("mallory", "tampering", "mha.course.checks"),
    ("xena", "limits", "ignored the interrupt"),
    ("hugo", "limits", "hit the memory limit (MemoryError)"),
    ("hugo", "limits", "hit the memory limit (RuntimeError)"),
    ("hugo", "limits", f"ran for more than {LIMITS['cell_timeout']} s"),
    ("hugo", "limits", "MB of output"),
    ("flo", "limits", "ignored the interrupt"),
    ("flo", "limits", "MB of output"),
    ("meta", "other", "not a readable notebook: its metadata is a JSON list"),
    ("deep", "other", "not a readable notebook: JSON nested too deeply"),
    ("sparse", "other", "old.ipynb is 60 MB (more than 50 MB): not graded"),
    ("sparse", "other", "data.bin"),
    ("zoe", "duplicate", "2 notebooks for ex01_self_attention"),
    ("zoe", "duplicate", "zoe/ex01_self_attention.ipynb"),
]


@pytest.mark.parametrize("student, kind, note", EXPECTED_NOTES)
def test_each_row_says_what_happened(graded, student, kind, note):
    assert note in graded["rows"][student][kind]


def test_unicode_names_are_kept_and_formulas_escaped(graded):
    rows = graded["rows"]
    assert {"张伟", "李娜"} <= set(rows) and rows["张伟"]["total"] != rows["李娜"]["total"]
    assert "'" + FORMULA in rows and FORMULA not in rows
    with open(graded["out"] / "grades.csv", newline="", encoding="utf-8") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))]
    feedback = {p.name for p in (graded["out"] / "feedback").iterdir()}
    assert {f"{file_name('张伟')}.md", f"{file_name('李娜')}.md"} <= feedback


def test_no_public_message_carries_a_hidden_tests_inputs(graded):
    import re

    raw = json.loads((graded["out"] / "raw" / f"{file_name('hana')}__{EXERCISE}.json").read_text())
    public = [c["message"] for q in raw["questions"].values() for c in q["cases"]
              if not c["hidden"] and "SEEN" in c["message"]]
    assert public and "(6, 8)" in public[0]  # the public q1 test's running example reached it...
    allowed = {"(6, 8)", "(2, 3, 4, 6)"}  # ...and only the public q1 test's q (tests/q1.py: d_k = 6)
    for message in public:
        assert set(re.findall(r"\([0-9, ]+\)", message.split("SEEN", 1)[1])) <= allowed, message


def test_notes_are_one_per_line_in_their_own_column(graded):
    # CSV-safe whatever the notes contain
    assert len(graded["rows"]["erin"]["tampering"].splitlines()) >= 3


def test_feedback_explains_lost_points(graded):
    feedback = graded["out"] / "feedback"
    dave = (feedback / f"{file_name('dave')}.md").read_text()
    assert f"did not finish within {LIMITS['check_time_limit']} s" in dave
    bob = (feedback / f"{file_name('bob')}.md").read_text()
    assert "`//` is floor division" in bob and f"### q1: 0 / {POINTS['q1']:g}" in bob
    erin = (feedback / f"{file_name('erin')}.md").read_text()
    assert "the scores are not scaled" in erin
    assert len(erin) < 100_000  # the 5 MB of output are not copied into the feedback
    yves = (feedback / f"{file_name('yves')}.md").read_text()
    assert "did not finish within" in yves


def test_an_imported_library_function_is_not_the_students_answer(graded):
    ivan = (graded["out"] / "feedback" / f"{file_name('ivan')}.md").read_text()
    assert "`attention` is `mha.attention.scaled_dot_product_attention`, imported from a library" in ivan
    assert f"### q3: 0 / {POINTS['q3']:g}" in ivan


def test_hidden_tests_and_solutions_stay_hidden(graded):
    sybil = (graded["out"] / "feedback" / f"{file_name('sybil')}.md").read_text()
    assert "LEAK" in sybil  # her message did reach her feedback...
    assert "FileNotFoundError" in sybil or "PermissionError" in sybil
    hidden_source = (AUTOGRADER / "tests" / "q1.py").read_text()
    assert "test_scores_random_shapes" in hidden_source
    leak = " ".join(line for line in sybil.splitlines() if "LEAK" in line)
    assert "mha" in leak  # what the sandbox shows of the checkout: mha (and the virtualenv)
    for secret in ("random_sizes(100", "BEGIN SOLUTION", "test_scores_random_shapes",
                   "grading", "exercises", "submissions", ".git", "pytest-of"):
        assert secret not in leak, secret
    # failing hidden tests show the check's message, never the test's source
    for name in ("bob", "grace"):
        text = (graded["out"] / "feedback" / f"{file_name(name)}.md").read_text()
        assert "Error at line" not in text and "random_sizes(" not in text


def test_notes_file_lists_every_note(graded):
    with open(graded["out"] / "notes.csv", newline="", encoding="utf-8") as f:
        notes = list(csv.DictReader(f))
    assert {n["kind"] for n in notes} <= set(KINDS)
    per_student = {}
    for n in notes:
        per_student.setdefault(n["student"], []).append(n["note"])
    for name, row in graded["rows"].items():
        in_row = [line for k in KINDS for line in row[k].splitlines()]
        assert sorted(in_row) == sorted(per_student.get(name, [])), name


def test_a_rerun_resumes_from_the_stored_results(graded, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(graded["out"], out)
    (out / "grades.csv").unlink()
    done, seconds = _grade(graded["subs"], out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reused" in done.stdout and "Grading 0 notebooks" in done.stdout
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert rows == graded["rows"]
