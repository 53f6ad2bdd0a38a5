"""Grade a folder of submitted exercise notebooks into a CSV and per-student feedback.

    python -m grading.grade SUBMISSIONS --out results/ [--exercise ex01_self_attention]
        [--jobs 2] [--timeout 600] [--cell-timeout 60] [--check-time-limit 20]

SUBMISSIONS holds either one notebook per student (``alice.ipynb``: the student is the file
name) or one folder per student (``alice/ex01_self_attention.ipynb``, ``alice/ex03_masking.ipynb``).
The exercise of each notebook is ``--exercise`` if given, else the one recorded in the
notebook's metadata, else the exercise named in its file name.

Each notebook is graded in its own process and Jupyter kernel (``grading.worker``, built on
otter-grader) against the exercise's public and hidden tests, with a time limit per cell,
per call of the student's code and per submission. A notebook that loops forever, raises,
calls ``sys.exit``, prints megabytes, deletes cells or edits the tests gets the points it
earned and a note that says why; a cell that kills the kernel (or ignores interrupts) is
skipped and the notebook graded again without it. Submissions are only read, never written.

Writes, in ``--out``:
  grades.csv                one row per student: one column per question (``ex01.q1``, ...),
                            total, possible, notes
  feedback/<student>.md     per-student feedback: points, every test's message, notes
  raw/<student>__<exercise>.json and .log   the worker's full result and log
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"
MAX_ATTEMPTS = 3  # grading runs per submission (each retry skips the cell that stopped the last)


def known_exercises() -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text())
            for p in sorted(AUTOGRADER.glob("*/manifest.json"))}


def short_name(exercise: str) -> str:
    return exercise.split("_")[0]


@dataclass
class Submission:
    student: str
    path: Path
    exercise: str | None
    notes: list[str] = field(default_factory=list)
    result: dict | None = None


def detect_exercise(path: Path, forced: str | None, exercises: dict) -> tuple[str | None, list[str]]:
    notes = []
    declared = None
    try:
        declared = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}) \
            .get("mha_course", {}).get("exercise")
    except (OSError, ValueError, AttributeError):
        pass
    if forced:
        return forced, notes
    if declared in exercises:
        return declared, notes
    stem = path.stem.lower()
    for name in exercises:
        if name in stem or re.search(rf"(^|[^a-z0-9]){short_name(name)}([^0-9]|$)", stem):
            return name, notes
    return None, [f"{path.name}: cannot tell which exercise this is (no exercise in its "
                  f"metadata or file name); use --exercise"]


def discover(folder: Path, forced: str | None, exercises: dict) -> list[Submission]:
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            notebooks, student = [entry], entry.stem
        elif entry.is_dir():
            notebooks, student = sorted(p for p in entry.glob("*.ipynb")), entry.name
        else:
            continue
        by_exercise: dict[str | None, list[Path]] = {}
        for nb in notebooks:
            exercise, notes = detect_exercise(nb, forced, exercises)
            if exercise is None:
                found.append(Submission(student, nb, None, notes))
                continue
            by_exercise.setdefault(exercise, []).append(nb)
        for exercise, paths in by_exercise.items():
            chosen = max(paths, key=lambda p: p.stat().st_mtime)
            sub = Submission(student, chosen, exercise)
            if len(paths) > 1:
                sub.notes.append(f"{len(paths)} notebooks for {exercise}; graded the most "
                                 f"recently modified, {chosen.name}")
            found.append(sub)
    return found


def kill_tree(pid: int) -> None:
    """Kill a worker and everything it started (its Jupyter kernel runs in its own session)."""
    try:
        import psutil

        parent = psutil.Process(pid)
        procs = parent.children(recursive=True) + [parent]
        for p in procs:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(procs, timeout=5)
    except ImportError:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    except Exception:
        pass


def run_worker(sub: Submission, args, raw_dir: Path) -> dict:
    """Grade one submission, retrying without the cell that killed the kernel or hung."""
    stem = f"{sub.student}__{sub.exercise}"
    skipped: list[int] = []
    notes: list[str] = []
    started = time.monotonic()
    log_parts = []
    result = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        remaining = args.timeout - (time.monotonic() - started)
        if remaining < 10:
            break
        with tempfile.TemporaryDirectory(prefix="mha-worker-") as tmp:
            result_path, progress_path = Path(tmp) / "result.json", Path(tmp) / "progress.json"
            cmd = [sys.executable, "-m", "grading.worker", "--exercise", sub.exercise,
                   "--submission", str(sub.path), "--result", str(result_path),
                   "--progress", str(progress_path), "--cell-timeout", str(args.cell_timeout),
                   "--check-time-limit", str(args.check_time_limit),
                   "--deadline", str(max(5.0, remaining - 5))]
            for index in skipped:
                cmd += ["--skip-cell", str(index)]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
            with open(Path(tmp) / "out.log", "w+b") as out:
                proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env,
                                        start_new_session=True)
                try:
                    proc.wait(timeout=remaining)
                    timed_out = False
                except subprocess.TimeoutExpired:
                    kill_tree(proc.pid)
                    proc.wait()
                    timed_out = True
                out.seek(0)
                log_parts.append(f"--- attempt {attempt} ---\n" + out.read()[-50_000:].decode(
                    "utf-8", "replace"))
            progress = json.loads(progress_path.read_text()) if progress_path.exists() else None
            result = json.loads(result_path.read_text()) if result_path.exists() else None
        if result is not None and result["status"] in ("graded", "invalid"):
            break
        # The worker died, hung or lost its kernel: find the cell that was running.
        culprit = (result or {}).get("culprit") or progress
        cell = culprit.get("cell") if culprit else None
        what = ("did not finish within the time limit" if timed_out
                else (result or {}).get("error", "crashed"))
        if cell is None or cell in skipped:
            where = f" while running `{culprit['first_line']}`" if culprit else ""
            notes.append(f"grading stopped{where}: {what}; questions whose tests had not run "
                         f"get 0")
            break
        skipped.append(cell)
        notes.append(f"cell {cell + 1} (`{culprit.get('first_line')}`) stopped the grading "
                     f"({what}); it was skipped and the notebook graded again without it")
        result = None
    if result is None or result.get("status") not in ("graded", "invalid"):
        manifest = json.loads((AUTOGRADER / sub.exercise / "manifest.json").read_text())
        result = dict(result or {}, exercise=sub.exercise, status="failed", questions={
            q: {"score": 0.0, "possible": p, "cases": [],
                "error": "the tests of this question could not run"}
            for q, p in manifest["questions"].items()})
        result["score"], result["possible"] = 0.0, float(manifest["total"])
    result["notes"] = sub.notes + notes + result.get("notes", [])
    result["attempts"] = len(log_parts)
    result["seconds"] = round(time.monotonic() - started, 1)
    raw_dir.mkdir(parents=True, exist_ok=True)
    (raw_dir / f"{stem}.log").write_text("\n".join(log_parts))
    (raw_dir / f"{stem}.json").write_text(json.dumps(result, indent=1))
    return result


def fingerprint(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), stat.st_mtime_ns, stat.st_size


def fmt(x: float) -> str:
    return f"{x:g}"


def write_feedback(student: str, subs: list[Submission], exercises: dict, path: Path,
                   hide_hidden: bool) -> None:
    lines = [f"# Feedback for {student}", ""]
    for sub in sorted(subs, key=lambda s: s.exercise or ""):
        if sub.exercise is None:
            lines += ["## Not graded", "", *[f"- {n}" for n in sub.notes], ""]
            continue
        res, manifest = sub.result, exercises[sub.exercise]
        lines += [f"## {manifest['title']}: {fmt(res['score'])} / {fmt(res['possible'])} points",
                  "", f"Graded file: `{sub.path.name}` (sha256 {res.get('sha256', '?')[:12]})", "",
                  "| Question | Points |", "|---|---|"]
        for q, info in res["questions"].items():
            lines.append(f"| {q} | {fmt(info['score'])} / {fmt(info['possible'])} |")
        lines.append("")
        if res["notes"]:
            lines += ["### Notes", "", *[f"- {n}" for n in res["notes"]], ""]
        for q, info in res["questions"].items():
            lines += [f"### {q}: {fmt(info['score'])} / {fmt(info['possible'])}", ""]
            if info.get("error"):
                lines += [f"- {info['error']}", ""]
            public = hidden = 0
            for case in info["cases"]:
                if case["hidden"]:
                    hidden += 1
                    label = f"hidden test {hidden}"
                else:
                    public += 1
                    label = f"public test {public}"
                status = "passed" if case["passed"] else "failed"
                lines.append(f"- {label}: {status}")
                if not case["passed"] and not (case["hidden"] and hide_hidden):
                    message = case["message"].replace("❌ Test case failed\n", "")
                    lines += ["", "  ```", *[f"  {m}" for m in message.splitlines()], "  ```", ""]
            lines.append("")
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Grade submitted exercise notebooks into a CSV plus per-student feedback.")
    parser.add_argument("submissions", type=Path, help="folder of submitted notebooks")
    parser.add_argument("--out", type=Path, default=Path("results"), help="output folder")
    parser.add_argument("--exercise", help="grade every notebook as this exercise")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded in parallel")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds per submission, all attempts included (default 600)")
    parser.add_argument("--cell-timeout", type=int, default=60,
                        help="seconds per notebook cell before it is interrupted (default 60)")
    parser.add_argument("--check-time-limit", type=float, default=20,
                        help="seconds per call of the student's code inside a test (default 20)")
    parser.add_argument("--hide-hidden", action="store_true",
                        help="feedback says whether hidden tests passed, not their messages")
    args = parser.parse_args(argv)

    exercises = known_exercises()
    if args.exercise and args.exercise not in exercises:
        parser.error(f"unknown exercise {args.exercise!r}; known: {', '.join(exercises)}")
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    subs = discover(args.submissions.resolve(), args.exercise, exercises)
    before = {s.path: fingerprint(s.path) for s in subs}

    todo = [s for s in subs if s.exercise is not None]
    print(f"Grading {len(todo)} notebooks of {len({s.student for s in subs})} students "
          f"with {args.jobs} jobs...", flush=True)
    raw_dir = args.out / "raw"

    def work(sub: Submission) -> None:
        sub.result = run_worker(sub, args, raw_dir)
        r = sub.result
        print(f"  {sub.student} / {sub.exercise}: {fmt(r['score'])} / {fmt(r['possible'])} "
              f"({r['seconds']:g} s){' - ' + r['notes'][0] if r['notes'] else ''}", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(work, todo))

    changed = [str(p) for p, fp in before.items() if fingerprint(p) != fp]
    if changed:  # cannot happen: workers read a copy. Say so loudly if it ever does.
        print(f"ERROR: submissions changed during grading: {changed}", file=sys.stderr)

    graded_exercises = sorted({s.exercise for s in todo})
    columns = [f"{short_name(e)}.{q}" for e in graded_exercises for q in exercises[e]["questions"]]
    students = sorted({s.student for s in subs})
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "feedback").mkdir(exist_ok=True)
    with open(args.out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *columns, "total", "possible", "notes"])
        for student in students:
            mine = [s for s in subs if s.student == student]
            row = {c: "" for c in columns}
            total, notes = 0.0, []
            for e in graded_exercises:
                sub = next((s for s in mine if s.exercise == e), None)
                if sub is None:
                    notes.append(f"{short_name(e)}: not submitted")
                    continue
                for q, info in sub.result["questions"].items():
                    row[f"{short_name(e)}.{q}"] = fmt(info["score"])
                total += sub.result["score"]
                notes += [f"{short_name(e)}: {n}" for n in sub.result["notes"]]
            for s in mine:
                if s.exercise is None:
                    notes += s.notes
            possible = sum(exercises[e]["total"] for e in graded_exercises)
            writer.writerow([student, *row.values(), fmt(total), fmt(possible), "; ".join(notes)])
            write_feedback(student, mine, exercises, args.out / "feedback" / f"{student}.md",
                           args.hide_hidden)
    print(f"Wrote {args.out / 'grades.csv'} and {len(students)} feedback files in "
          f"{args.out / 'feedback'}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
