"""Grade one submitted notebook: its code runs in a sandbox, its tests run here.

    python -m grading.worker --exercise EXERCISE --submission NB [--result OUT.json]
        [--cell-timeout 60] [--check-time-limit 20] [--timeout 600]

(the command line grades one notebook against the live ``grading/autograder`` files, to try
things out; ``grading.grade`` grades a class from a snapshot, with the same ``grade_notebook``).

``grade_notebook``:

1. reads the notebook here (JSON only) and notes what the instructor should know (check
   cells deleted, locked cells edited, references to the grader's internals:
   ``grading.submission``);
2. starts a sandbox (``grading.sandbox``: bubblewrap) and runs the notebook's code cells in it
   (not the check cells, nor the cells tagged ``skip-in-grading``: the capstone's own training
   run, which its hidden test repeats with the grader's clock), one request per cell, each
   with a time limit: past it the cell is interrupted, and if it
   ignores the interrupt the sandbox is killed, started again, and the notebook re-run without
   that cell; a cell that ends the process (``os._exit``, a crash, the memory limit) is skipped
   the same way. A sandbox that fails to start is started again (3 attempts);
3. runs every question's otter test file (public and hidden) HERE, with
   ``mha.course.checks.run_test_file``, against the notebook's namespace as seen through the
   sandbox (``grading.sandbox.Namespace``): each call of the student's code is a request with
   its own time limit, and the comparisons, the messages and the points are computed here.
   A question's result is kept as soon as its tests ran; a later failure never takes it back.
   Every question is all or nothing: once one of its public cases failed, its hidden cases are
   not run (they could not change its points; the capstone's would train a model).

Everything the grader does for one notebook, reading and scanning it included, keeps to one
deadline (``timeout`` seconds from the start of ``grade_notebook``). Notes have a kind
(``tampering``, ``sandbox``, ``limits``, ``errors``, ``other``), one column each in grades.csv.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grading.sandbox import (LOG_BYTES, Limits, Namespace, Sandbox, SandboxError,
                             SubmissionTimeout)
from grading.submission import (NOTE_KINDS, NotANotebook, Notes, first_line,  # noqa: F401
                                inspect_submission, is_check_cell, read_notebook,
                                tamper_markers)

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"
EXERCISES = ROOT / "exercises"
OUTPUT_BUDGET = 1_000_000  # bytes of output per cell before a note says it printed too much
START_ATTEMPTS = 3
# Cells with this tag are not run when grading: their work is redone by a test (the capstone's
# training run); a student who removes the tag only spends the cell's time limit.
SKIP_TAG = "skip-in-grading"


@dataclass
class Exercise:
    """What grading one exercise needs, read once (from the snapshot)."""
    name: str
    manifest: dict
    tests: dict[str, Path]  # question -> otter test file
    distributed: object | None  # the student notebook as handed out (for locked cells)
    distributed_zh: object | None = None  # the Chinese edition's, which a student may hand in

    @classmethod
    def load(cls, folder: Path, distributed: Path | None,
             distributed_zh: Path | None = None) -> "Exercise":
        manifest = json.loads((folder / "manifest.json").read_text())
        tests = {q: folder / "tests" / f"{q}.py" for q in manifest["questions"]}
        read = lambda path: nbformat.read(path, as_version=4) if path and path.exists() else None  # noqa: E731
        return cls(folder.name, manifest, tests, read(distributed), read(distributed_zh))

    def handed_out(self, nb):
        """The edition of the notebook the student started from (by its feedback language)."""
        from mha.course.checks import notebook_language

        if notebook_language(nb) == "zh" and self.distributed_zh is not None:
            return self.distributed_zh
        return self.distributed

    def key(self) -> str:
        """Changes when the tests change (a stored result is then stale)."""
        digest = hashlib.sha256(json.dumps(self.manifest["questions"]).encode())
        for path in self.tests.values():
            digest.update(path.read_bytes())
        return digest.hexdigest()[:16]



class _Restart(Exception):
    """The sandbox was killed while running a cell: start again without that cell."""


class NotebookRun:
    """The notebook in a sandbox, kept alive (restarted and re-run when needed) for the tests."""

    def __init__(self, cells: list[tuple[int, str]], setup_cells: int, limits: Limits,
                 deadline: float, notes: Notes):
        self.cells, self.setup_cells = cells, setup_cells
        self.limits, self.deadline, self.notes = limits, deadline, notes
        self.sandbox: Sandbox | None = None
        self.generation = 0
        self.skipped: dict[int, str] = {}
        self.seen: set[int] = set()  # cells whose outcome is already noted
        self.starts = 0
        self.broken: str | None = None
        self.cpu_seconds = 0.0  # of every sandbox this run started
        self.output_log = ""

    def connect(self) -> Sandbox:
        """A live sandbox that has run the notebook (restarting it if it was stopped)."""
        if self.sandbox is not None and self.sandbox.alive:
            return self.sandbox
        if self.broken:  # it could not start: don't try again for every test
            raise SandboxError(self.broken)
        if self.sandbox is not None:
            self._keep_log()
            if time.monotonic() >= self.deadline:
                raise SubmissionTimeout("the time limit of the whole submission was reached")
        while True:
            self.sandbox = self._start()
            try:
                self._run_cells(self.sandbox)
                return self.sandbox
            except _Restart:
                self._keep_log()
                continue

    def _start(self) -> Sandbox:
        failures = []
        for attempt in range(START_ATTEMPTS):
            self.generation += 1
            sandbox = Sandbox(self.limits, self.deadline, self.generation)
            try:
                sandbox.start()
                self.starts += 1
                if failures:
                    self.notes.add("sandbox", f"the sandbox failed to start {len(failures)} "
                                              f"time(s) ({failures[-1]}); started again")
                return sandbox
            except SandboxError as exc:
                failures.append(str(exc)[:200])
                if time.monotonic() >= self.deadline:
                    break
        self.broken = f"the sandbox could not start ({'; '.join(failures)[:300]})"
        raise SandboxError(self.broken)

    def _run_cells(self, sandbox: Sandbox) -> None:
        for index, source in self.cells:
            if index in self.skipped:
                continue
            where = f"cell {index + 1} (`{first_line(source)}`)"
            limit = self.limits.setup if index < self.setup_cells else self.limits.cell
            before = sandbox.output_bytes
            try:
                reply = sandbox.request({"op": "run", "source": source}, limit)
            except SubmissionTimeout:
                raise
            except TimeoutError:
                self._note_output(where, sandbox.output_bytes - before)
                self.skipped[index] = "timeout"
                self.notes.add("limits", f"{where} ran for more than {limit:g} s and ignored the "
                                         f"interrupt: the sandbox was stopped and the notebook "
                                         f"run again without this cell")
                raise _Restart() from None
            except SandboxError as exc:
                self._note_output(where, sandbox.output_bytes - before)
                self.skipped[index] = "died"
                self.notes.add("sandbox", f"{where} ended the notebook's process "
                                          f"({sandbox.death}): the notebook was run again "
                                          f"without this cell")
                raise _Restart() from exc
            if index in self.seen:
                continue
            self.seen.add(index)
            time.sleep(0.01)  # let the output reader catch up before counting
            self._note_output(where, sandbox.output_bytes - before)
            if reply.get("timed_out"):
                self.skipped[index] = "interrupted"  # a re-run skips it rather than wait again
                self.notes.add("limits", f"{where} ran for more than {limit:g} s and was "
                                         f"interrupted; grading went on with the next cell")
                continue
            error = reply.get("error")
            if isinstance(error, dict):
                self._note_error(where, error)

    def _note_output(self, where: str, printed: int) -> None:
        if printed > OUTPUT_BUDGET:
            self.notes.add("limits", f"{where} printed {printed / 1e6:.1f} MB of output (only "
                                     f"the first {LOG_BYTES / 1e3:g} kB of the notebook's output "
                                     f"are kept, in the raw log)")

    def _note_error(self, where: str, error: dict) -> None:
        name = error.get("type") if isinstance(error.get("type"), str) else "Error"
        value = error.get("message") if isinstance(error.get("message"), str) else ""
        if name == "SystemExit":
            self.notes.add("errors", f"{where} called sys.exit(); grading went on with the "
                                     f"next cell")
        elif name in ("PermissionError", "OSError") and ("Read-only" in value
                                                         or "ermission" in value):
            self.notes.add("sandbox", f"{where} tried to write outside its scratch folder: "
                                      f"{name}: {value}"[:300])
        elif name == "MemoryError" or "can't allocate memory" in value:
            self.notes.add("limits", f"{where} hit the memory limit ({name})")
        else:
            self.notes.add("errors", f"{where} raised {name}: {value}"[:300])

    def _keep_log(self) -> None:
        if self.sandbox is not None:
            self.output_log += self.sandbox.log_tail()[-5000:]
            self.cpu_seconds += self.sandbox.cpu_seconds

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.kill("grading finished")
            self._keep_log()
            self.sandbox = None


def load_test_file(path: Path):
    """otter's test-file object of ``path`` (``tests/qN.py``), no case run yet."""
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    test = create_test_file(str(path), NBMetadataConfig())
    test.test_case_results = []
    return test


def _hidden_flag(node) -> bool | None:
    """``hidden=`` of an otter ``@test_case(...)`` function; None for any other statement."""
    import ast

    for decorator in getattr(node, "decorator_list", []):
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "test_case":
            for keyword in decorator.keywords:
                if keyword.arg == "hidden" and isinstance(keyword.value, ast.Constant):
                    return bool(keyword.value.value)
            return False
    return None


def run_cases(test, path: Path, env, language: str | None, hidden: bool) -> list:
    """Run the public (or the hidden) cases of the otter test file ``path`` against ``env``
    with ``mha.course.checks.run_test_file`` (on a copy of the file holding only those
    cases); their otter results are added to ``test`` (the whole file's object, whose
    ``score`` then counts every case run so far)."""
    import ast
    import tempfile

    from otter.test_files.abstract_test import TestCaseResult

    from mha.course.checks import run_test_file

    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    tree.body = [node for node in tree.body if _hidden_flag(node) in (None, hidden)]
    cases = {case.body.test_func.__name__: case for case in test.test_cases}
    with tempfile.TemporaryDirectory(prefix="mha-tests-") as folder:
        part = Path(folder) / Path(path).name
        part.write_text(ast.unparse(tree), encoding="utf-8")
        _, results = run_test_file(part, env, language=language)
    for result in results:
        test.test_case_results.append(TestCaseResult(test_case=cases[result.name],
                                                     message=result.message,
                                                     passed=result.passed))
    return results


def _decided_by_public_cases(test) -> bool:
    """Whether a question's points are settled by its public cases alone: it is all or nothing
    and one of them failed. Its hidden cases are then not run: they could not change the points,
    and they can be long (the capstone's q5 trains a model for a minute and more)."""
    return bool(test.all_or_nothing) and not all(r.passed for r in test.test_case_results)


def graded_cells(nb) -> list[tuple[int, str]]:
    """(index, source) of the code cells a grading runs: not the check cells, nor the cells
    tagged ``skip-in-grading``."""
    return [(i, c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and not is_check_cell(c.source)
            and SKIP_TAG not in c.metadata.get("tags", [])]


def first_question_cell(nb) -> int:
    """Index of the first cell that belongs to a question (the cells above set things up)."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## Question"):
            return index
        if "otter_answer_cell" in cell.metadata.get("tags", []) or "grader.check(" in cell.source:
            return index
    return 0


def _run_question(started_tests: dict, question: str, path: Path, env, language, hidden: bool):
    """Run one question's public (or hidden) cases, adding them to ``started_tests``. An
    exception out of here is the grader's own (the student's code only runs in the sandbox,
    and a case's failure is caught as a failed case): it is tried once more before the question
    gets 0, because a rare one (a ``SystemError`` seen twice in 2 x 34 graded notebooks on a
    loaded machine, never reproduced) must not cost a student points."""
    for attempt in (1, 2):
        try:
            if question not in started_tests:
                started_tests[question] = (load_test_file(path), [])
            test, cases = started_tests[question]
            cases += run_cases(test, path, env, language, hidden)
            return cases
        except Exception:
            if attempt == 2:
                raise


def empty_questions(exercise: Exercise, why: str) -> dict:
    return {q: {"score": 0.0, "possible": float(p), "cases": [], "error": why}
            for q, p in exercise.manifest["questions"].items()}


def grade_notebook(raw: bytes, exercise: Exercise, limits: Limits, timeout: float) -> dict:
    """Grade one notebook (its bytes). Never raises for anything the notebook does."""
    from mha.course.checks import notebook_language

    started, cpu_started = time.monotonic(), time.thread_time()
    deadline = started + timeout
    notes = Notes()
    result = {"exercise": exercise.name, "sha256": hashlib.sha256(raw).hexdigest(),
              "status": "graded", "questions": {}}
    try:
        nb = read_notebook(raw)
        cells = graded_cells(nb)
        language = notebook_language(nb)  # the Chinese edition's notebooks get Chinese feedback
        inspect_submission(nb, exercise, notes, deadline)
        setup_cells = first_question_cell(nb)
    except SubmissionTimeout:
        notes.add("limits", f"the whole submission ran out of time ({timeout:g} s) while the "
                            f"grader read it; no question was graded")
        result.update(status="timeout", questions=empty_questions(
            exercise, "not graded: the submission's time limit was reached"))
        return finish(result, notes, started)
    except (Exception, RecursionError) as exc:  # not UTF-8, not JSON, not a notebook
        why = (str(exc) if isinstance(exc, NotANotebook) else "JSON nested too deeply"
               if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {str(exc)[:200]}")
        notes.add("other", f"not a readable notebook: {why}")
        result.update(status="invalid", questions=empty_questions(exercise, "not a notebook"))
        return finish(result, notes, started)
    result["language"] = language

    run = NotebookRun(cells, setup_cells, limits, deadline, notes)
    env = Namespace(run.connect)
    try:
        try:
            run.connect()
        except SandboxError as exc:
            notes.add("sandbox", f"the notebook could not be run: {exc}")
        # Every question's public tests first, then the hidden ones: the student's code never
        # sees a hidden test's inputs before all the messages it may show (public tests) are
        # written, so it cannot pass them on through a public test's failure message.
        started_tests: dict[str, tuple] = {}
        settled: set[str] = set()  # questions whose hidden cases were not run
        for hidden in (False, True):
            for question, path in exercise.tests.items():
                if question in result["questions"]:
                    continue  # not graded (out of time) or its tests could not run
                if time.monotonic() >= deadline:
                    result["questions"][question] = {
                        "score": 0.0, "possible": float(exercise.manifest["questions"][question]),
                        "cases": [], "error": "not graded: the submission's time limit was reached"}
                    notes.add("limits", f"the whole submission ran out of time ({timeout:g} s); "
                                        f"questions not yet graded get 0")
                    continue
                if hidden and _decided_by_public_cases(started_tests[question][0]):
                    settled.add(question)
                    continue
                try:
                    _run_question(started_tests, question, path, env, language, hidden)
                except Exception as exc:  # the tests themselves failed, twice: this question only
                    result["questions"][question] = {
                        "score": 0.0, "possible": float(exercise.manifest["questions"][question]),
                        "cases": [], "error": f"the tests could not run: {type(exc).__name__}",
                        "traceback": traceback.format_exc(limit=-8)[-3000:]}
                    notes.add("other", f"the tests of {question} could not run "
                                       f"({type(exc).__name__})")
        for question in exercise.tests:
            if question in result["questions"]:
                continue
            test, cases = started_tests[question]
            order = {case.body.test_func.__name__: n for n, case in enumerate(test.test_cases)}
            cases.sort(key=lambda c: order.get(c.name, 0))
            result["questions"][question] = {
                "score": float(test.score), "possible": float(test.possible),
                "cases": [{"name": c.name, "hidden": c.hidden, "passed": c.passed,
                           "message": c.message} for c in cases],
                "hidden_not_run": question in settled}
            if any("time limit of the whole submission" in c.message for c in cases):
                notes.add("limits", f"the whole submission ran out of time ({timeout:g} s) "
                                    f"during the tests of {question}")
        result["questions"] = {q: result["questions"][q] for q in exercise.tests}
    finally:
        run.close()
    result["cpu_seconds"] = {"sandbox": round(run.cpu_seconds, 2),
                             "grader": round(time.thread_time() - cpu_started, 2)}
    result["sandbox_starts"] = run.starts
    result["skipped_cells"] = sorted(run.skipped)
    result["log"] = run.output_log[-20_000:]
    return finish(result, notes, started)


def finish(result: dict, notes: Notes, started: float) -> dict:
    result["notes"] = [{"kind": k, "text": t} for k, t in notes.items]
    result["score"] = sum(q["score"] for q in result["questions"].values())
    result["possible"] = sum(q["possible"] for q in result["questions"].values())
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Grade one notebook (see grading.grade).")
    parser.add_argument("--exercise", required=True)
    parser.add_argument("--submission", required=True, type=Path)
    parser.add_argument("--result", type=Path)
    parser.add_argument("--cell-timeout", type=float, default=60)
    parser.add_argument("--check-time-limit", type=float, default=20)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args(argv)
    exercise = Exercise.load(AUTOGRADER / args.exercise,
                             EXERCISES / args.exercise / f"{args.exercise}.ipynb",
                             ROOT / "zh" / "exercises" / args.exercise / f"{args.exercise}.ipynb")
    limits = Limits(cell=args.cell_timeout, call=args.check_time_limit)
    result = grade_notebook(args.submission.read_bytes(), exercise, limits, args.timeout)
    text = json.dumps(result, indent=1)
    if args.result:
        args.result.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
