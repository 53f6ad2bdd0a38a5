"""Grade ONE submitted notebook with otter-grader; run by ``grading.grade`` in a subprocess.

    python -m grading.worker --exercise EXERCISE --submission NB --result OUT.json
        [--progress PROGRESS.json] [--cell-timeout 60] [--check-time-limit 20]
        [--deadline 600] [--skip-cell N ...] [--executed EXECUTED.ipynb]

The submission is copied to a temporary directory (the original is only read) and graded by
``otter run``'s engine (``otter.run.main``: a fresh Jupyter kernel executes the notebook, then
every question's public and hidden tests run against it). Around otter, this worker adds what
grading untrusted notebooks needs:

* a per-cell time limit; a cell that exceeds it is interrupted (KeyboardInterrupt) and the
  notebook goes on with the next cell. The final cell, where otter runs the tests of every
  question, gets the rest of the ``--deadline`` instead. Inside the tests every call of the
  student's code has its own limit (``--check-time-limit``, see ``exercise_checks.call``);
* an output budget: a cell that prints megabytes keeps only its first ``OUTPUT_BUDGET`` bytes;
* a progress file naming the cell being executed, so that ``grading.grade`` can tell which
  cell killed the kernel (``os._exit``, a crash) or could not be interrupted (it ignored
  three interrupts, or the worker had to be killed), skip it (``--skip-cell``) and grade again;
* a JSON result: points per question, every test's message, and notes for the instructor
  (cells that failed, timed out or printed too much; check cells deleted; locked cells edited).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"
EXERCISES = ROOT / "exercises"
OUTPUT_BUDGET = 1_000_000  # bytes of output kept per cell
SETUP_TIMEOUT = 180  # seconds for the cells above the first question (imports on a busy machine)
CELL_KEY = "mha_grader_cell"  # metadata: index of the cell in the submitted notebook


def first_line(source: str, width: int = 60) -> str:
    for line in source.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= width else line[: width - 3] + "..."
    return "(empty)"


def build_autograder_zip(exercise: str, dest: Path) -> Path:
    """The otter autograder zip of one exercise: otter_config.json, tests/ and files/."""
    source = AUTOGRADER / exercise
    path = dest / f"{exercise}-autograder.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(source / "otter_config.json", "otter_config.json")
        for sub in ("tests", "files"):
            for file in sorted((source / sub).iterdir()):
                if file.is_file():
                    zf.write(file, f"{sub}/{file.name}")
    return path


def inspect_submission(nb, exercise: str, manifest: dict) -> list[str]:
    """Differences from the distributed notebook that the instructor should know about."""
    notes = []
    declared = nb.metadata.get("mha_course", {}).get("exercise")
    if declared and declared != exercise:
        notes.append(f"the notebook says it is {declared}, but it was graded as {exercise}")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    for question in manifest["questions"]:
        if not any(f'grader.check("{question}")' in s or f"grader.check('{question}')" in s
                   for s in code):
            notes.append(f"the check cell of {question} was deleted or edited "
                         f"(its tests ran anyway, at the end)")
    reference = EXERCISES / exercise / f"{exercise}.ipynb"
    if reference.exists():
        original = nbformat.read(reference, as_version=4)
        sources = {c.source.strip() for c in nb.cells}
        for cell in original.cells:
            if cell.metadata.get("editable", True) or cell.cell_type != "code":
                continue
            if "grader.check(" in cell.source:
                continue  # reported above
            if cell.source.strip() not in sources:
                notes.append(f"a locked cell was edited or deleted: `{first_line(cell.source)}`")
    return notes


class Progress:
    """Writes which cell is running to a JSON file (read by grading.grade if we die)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.current = None

    def write(self, **data) -> None:
        self.current = data
        if self.path:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)


def first_question_cell(nb) -> int:
    """Index of the first cell that belongs to a question (the cells above set things up)."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## Question"):
            return index
        if "otter_answer_cell" in cell.metadata.get("tags", []) or "grader.check(" in cell.source:
            return index
    return 0


def configure_otter(cell_timeout: int, deadline: float, progress: Progress, oversized: dict,
                    timed_out: set, setup_cells: int):
    """Make otter's notebook execution interrupt slow cells, report progress and cap output."""
    import nbclient.client
    import otter.execute
    from traitlets.config import Config

    def timeout_func(cell):
        index = cell.metadata.get(CELL_KEY)
        if index is None and "GradingResults" in cell.source and "Checker" in cell.source:
            # otter's final cell runs the tests of every question: give it the time left
            return max(cell_timeout, int(deadline - time.monotonic()))
        if index is None or index < setup_cells:
            # otter's set-up cells and the notebook's own (imports): slow on a busy machine
            return max(cell_timeout, SETUP_TIMEOUT)
        return cell_timeout

    def on_cell_start(cell, cell_index):
        progress.write(cell=cell.metadata.get(CELL_KEY), first_line=first_line(cell.source),
                       started=time.time())

    def make_config():
        c = Config()
        c.ExecutePreprocessor.timeout_func = timeout_func
        c.ExecutePreprocessor.interrupt_on_timeout = True
        c.ExecutePreprocessor.on_cell_start = on_cell_start
        c.ExecutePreprocessor.iopub_timeout = 10
        return c

    otter.execute.Config = make_config

    original_output = nbclient.client.NotebookClient.output
    sizes: dict[int, int] = {}

    def capped_output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(content.get("text", "")) + sum(len(str(v)) for v in content.get("data", {}).values())
        sizes[cell_index] = sizes.get(cell_index, 0) + size
        if sizes[cell_index] > OUTPUT_BUDGET:
            cell = self.nb.cells[cell_index]
            key = cell.metadata.get(CELL_KEY, f"otter-{cell_index}")
            oversized[key] = sizes[cell_index]
            return None
        return original_output(self, outs, msg, display_id, cell_index)

    nbclient.client.NotebookClient.output = capped_output

    original_handle_timeout = nbclient.client.NotebookClient._async_handle_timeout
    interrupts: dict = {}

    async def handle_timeout(self, timeout, cell=None):
        if cell is not None:
            key = cell.metadata.get(CELL_KEY, f"otter:{first_line(cell.source)}")
            timed_out.add(key)
            interrupts[key] = interrupts.get(key, 0) + 1
            if interrupts[key] > 2:
                # The cell ignores KeyboardInterrupt: stop here (nbclient then kills the
                # kernel); grading.grade skips this cell and grades the notebook again.
                raise RuntimeError(f"cell `{first_line(cell.source)}` ignored 3 interrupts")
        return await original_handle_timeout(self, timeout, cell)

    nbclient.client.NotebookClient._async_handle_timeout = handle_timeout


def collect(results, manifest: dict) -> dict:
    questions = {}
    for name, possible in manifest["questions"].items():
        test = results.results.get(name) if results is not None else None
        if test is None:
            questions[name] = {"score": 0.0, "possible": possible, "cases": [],
                               "error": "the tests of this question did not run"}
            continue
        cases = [{"hidden": r.test_case.hidden, "passed": r.passed,
                  "message": (r.message or "").strip()} for r in test.test_case_results]
        questions[name] = {"score": float(test.score), "possible": float(test.possible),
                           "cases": cases}
    return questions


def cell_notes(executed, cell_timeout: int, oversized: dict, timed_out: set,
               submitted) -> list[str]:
    notes = [f"the grader's cell `{key[6:]}` ran out of time" for key in timed_out
             if isinstance(key, str)]
    for cell in executed.cells:
        index = cell.metadata.get(CELL_KEY)
        if index is None or cell.cell_type != "code":
            continue
        where = f"cell {index + 1} (`{first_line(submitted.cells[index].source)}`)"
        if index in timed_out:
            notes.append(f"{where} ran for more than {cell_timeout} s and was interrupted; "
                         f"grading went on with the next cell")
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            name, value = out.get("ename", "Error"), str(out.get("evalue", "")).strip()
            value = value.splitlines()[0] if value else ""
            if name == "KeyboardInterrupt":
                if index not in timed_out:
                    notes.append(f"{where} raised KeyboardInterrupt")
            elif name == "SystemExit":
                notes.append(f"{where} called sys.exit(); grading went on with the next cell")
            else:
                notes.append(f"{where} raised {name}: {value}"[:300])
        if index in oversized:
            notes.append(f"{where} printed {oversized[index] / 1e6:.1f} MB of output; only the "
                         f"first {OUTPUT_BUDGET / 1e6:g} MB was kept")
    return notes


def grade(args) -> dict:
    exercise = args.exercise
    manifest = json.loads((AUTOGRADER / exercise / "manifest.json").read_text())
    raw = Path(args.submission).read_bytes()
    result = {
        "exercise": exercise, "submission": str(args.submission),
        "sha256": hashlib.sha256(raw).hexdigest(), "status": "graded",
        "questions": {}, "notes": [], "skipped_cells": list(args.skip_cell),
    }
    try:
        submitted = nbformat.reads(raw.decode("utf-8"), as_version=4)
    except Exception as exc:  # not JSON, not a notebook, ...
        result.update(status="invalid", questions=collect(None, manifest))
        result["notes"].append(f"not a readable notebook: {type(exc).__name__}: {exc}"[:300])
        return result
    result["notes"] += inspect_submission(submitted, exercise, manifest)

    graded = nbformat.from_dict(json.loads(json.dumps(submitted)))
    for index, cell in enumerate(graded.cells):
        cell.metadata[CELL_KEY] = index
        if index in args.skip_cell:
            cell.cell_type, cell.source = "code", "# [grader] this cell was skipped"
            cell.outputs, cell.execution_count = [], None
            cell.pop("attachments", None)
    for cell in graded.cells:  # stored outputs play no part in grading
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None

    progress = Progress(Path(args.progress) if args.progress else None)
    deadline = time.monotonic() + args.deadline
    oversized: dict = {}
    timed_out: set = set()
    configure_otter(args.cell_timeout, deadline, progress, oversized, timed_out,
                    first_question_cell(submitted))
    os.environ["MHA_CHECK_TIME_LIMIT"] = str(args.check_time_limit)
    # The kernel inherits this: for the exercises' tiny tensors one thread is much faster
    # (and more reproducible) than several threads competing for busy cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.pop("MHA_COURSE_SOURCE", None)  # grading never installs anything

    import otter.run

    log = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="mha-grade-") as tmp:
        tmp = Path(tmp)
        nb_path = tmp / f"{exercise}.ipynb"
        nbformat.write(graded, nb_path)
        zip_path = build_autograder_zip(exercise, tmp)
        results = None
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                results = otter.run.main(str(nb_path), autograder=str(zip_path),
                                         output_dir=None, no_logo=True)
        except Exception as exc:
            name = type(exc).__name__
            result["status"] = "kernel_died" if "DeadKernel" in name else "error"
            result["error"] = f"{name}: {exc}"[:500]
            result["culprit"] = progress.current
            log.write(traceback.format_exc())
    result["log"] = log.getvalue()[-20_000:]
    if results is not None and results.has_catastrophic_failure():
        result["status"] = "error"
        result["error"] = str(results._catastrophic_error)[:500]
        result["culprit"] = progress.current
        results = None
    result["questions"] = collect(results, manifest)
    if results is not None and getattr(results, "notebook", None) is not None:
        result["notes"] += cell_notes(results.notebook, args.cell_timeout, oversized, timed_out,
                                      submitted)
        if args.executed:
            nbformat.write(results.notebook, args.executed)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Grade one notebook (used by grading.grade).")
    parser.add_argument("--exercise", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--progress")
    parser.add_argument("--cell-timeout", type=int, default=60)
    parser.add_argument("--check-time-limit", type=float, default=20)
    parser.add_argument("--deadline", type=float, default=600)
    parser.add_argument("--skip-cell", type=int, action="append", default=[])
    parser.add_argument("--executed", help="also save the executed notebook here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    result = grade(args)
    result["seconds"] = round(time.monotonic() - started, 1)
    result["score"] = sum(q["score"] for q in result["questions"].values())
    result["possible"] = sum(q["possible"] for q in result["questions"].values())
    Path(args.result).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
