"""Grade a folder of submitted exercise notebooks into a CSV and per-student feedback.

    python -m grading.grade SUBMISSIONS --out results/ [--exercise ex01_self_attention]
        [--jobs 2] [--timeout 600] [--cell-timeout 60] [--check-time-limit 20]
        [--memory-limit 4096] [--hide-hidden] [--fresh]

SUBMISSIONS holds either one notebook per student (``alice.ipynb``: the student is the file
name) or one folder per student (``alice/ex01_self_attention.ipynb``, ...). The exercise of each
notebook is ``--exercise`` if given, else the one recorded in the notebook's metadata, else the
exercise named in its file name. Two notebooks of one student for one exercise (a notebook and a
folder, or two files) are a duplicate: the most recently modified one is graded, and the row says
so.

Before the first notebook runs, the chosen notebooks and the exercises' tests are copied into a
private snapshot (read-only, outside anything a sandbox can see); grading reads only the
snapshot. Each notebook then runs in its own bubblewrap sandbox while its tests run in this
process (``grading.worker``, ``grading.sandbox``): the verdict never runs in the student's process.

Writes, in ``--out``, as results come in (a crash loses at most the submissions in progress; a
re-run resumes: a stored result is reused when the notebook and the tests are unchanged; ``--fresh``
grades everything again):
  grades.csv                one row per student whose notebooks are all graded: one column per
                            question (``ex01.q1``, ...), total, possible, then one notes column per
                            kind (duplicate, tampering, sandbox, limits, errors, other), one note
                            per line
  notes.csv                 the same notes, one per row: student, exercise, kind, note
  feedback/<student>-<hash>.md     points, every failed test's message (hidden tests: only
                            pass/fail with ``--hide-hidden``), notes
  raw/<student>-<hash>__<exercise>.json   the full result of each notebook

The student is the file or folder name exactly as written (``file_name``: the hash of that exact
name makes one student one file); names that look alike (``look_alike``) are two students and a
note says so.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"
EXERCISES = ROOT / "exercises"
NOTE_KINDS = ("duplicate", "tampering", "sandbox", "limits", "errors", "other")
# A notebook larger than this is not read (a huge or sparse file costs only its own row).
MAX_NOTEBOOK_BYTES = 50 * 2**20


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
    notes: list[tuple[str, str]] = field(default_factory=list)
    copy: Path | None = None  # in the snapshot
    result: dict | None = None


def detect_exercise(path: Path, forced: str | None, exercises: dict) -> str | None:
    if forced:
        return forced
    declared = None
    try:  # whatever the file holds (a list, JSON nested 100,000 deep, bytes): no exercise
        if path.stat().st_size <= MAX_NOTEBOOK_BYTES:
            nb = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark is one
            meta = nb.get("metadata") if isinstance(nb, dict) else None
            course = meta.get("mha_course") if isinstance(meta, dict) else None
            declared = course.get("exercise") if isinstance(course, dict) else None
    except (OSError, ValueError, RecursionError, MemoryError):
        declared = None
    if not isinstance(declared, str):
        declared = None
    if declared in exercises:
        return declared
    stem = path.stem.lower()
    for name in exercises:
        if name in stem or re.search(rf"(^|[^a-z0-9]){short_name(name)}([^0-9]|$)", stem):
            return name
    return None


def shown(student: str) -> str:
    """The student's name as grades.csv, the notes and the feedback show it: as written, except
    that bytes that are not UTF-8 and control characters become U+FFFD."""
    import unicodedata

    name = student.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "".join("\ufffd" if unicodedata.category(c) == "Cc" else c for c in name)


def look_alike(student: str) -> str:
    """What a reader sees of a name: Unicode NFKC (a no-break space is a space, a full-width
    letter a letter), case folded, without blank space or invisible characters. Only compared:
    two names that look alike are two students, and a note says so."""
    import unicodedata

    name = unicodedata.normalize("NFKC", shown(student)).casefold()
    return "".join(c for c in name if not c.isspace() and unicodedata.category(c) != "Cf")


def file_name(student: str) -> str:
    """A file name for the student's feedback and raw results: their name where it is safe
    (letters of any script, digits, ``_.@+-``), then a hash of the exact name. The hash makes
    one student one file by construction: a folder named like another student's file name
    has a name of its own, hence a hash of its own."""
    safe = re.sub(r"[^\w.@+-]", "_", shown(student))[:80].lstrip(".") or "student"
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{safe}-{digest[:16]}"


def csv_cell(value) -> str:
    """A cell a spreadsheet shows as text: one that starts with ``= + - @`` (or a tab or a
    carriage return) would be read as a formula, so it gets a leading ``'`` (OWASP, CSV
    injection)."""
    value = str(value)
    if value and value[0] in "=+-@\t\r":
        return "'" + value
    return value


def discover(folder: Path, forced: str | None, exercises: dict) -> list[Submission]:
    """One submission per (student, exercise); duplicates and stray files are noted."""
    candidates: dict[tuple[str, str | None], list[Path]] = {}
    stray: dict[str, list[str]] = {}
    rejected: list[Submission] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        # The student is the file or folder name as written: never stripped or normalised, so
        # that a look-alike name (``alice`` and a no-break space) cannot take over a row.
        if entry.is_file() and entry.suffix == ".ipynb":
            student, notebooks = entry.stem, [entry]
        elif entry.is_dir():
            student = entry.name
            notebooks = sorted(p for p in entry.rglob("*.ipynb") if p.is_file()
                               and not p.is_symlink() and ".ipynb_checkpoints" not in p.parts)
            others = sorted(str(p.relative_to(entry)) for p in entry.rglob("*")
                            if p.is_file() and p not in notebooks
                            and ".ipynb_checkpoints" not in p.parts)
            if others:
                stray.setdefault(student, []).extend(others)
        else:
            continue
        for nb in notebooks:
            try:
                size = nb.stat().st_size
            except OSError:
                size = None
            if size is None or size > MAX_NOTEBOOK_BYTES:
                why = "cannot be read" if size is None else \
                    f"is {size / 2**20:.0f} MB (more than {MAX_NOTEBOOK_BYTES >> 20} MB)"
                rejected.append(Submission(student, nb, None, [(
                    "other", f"{nb.name} {why}: not graded")]))
                continue
            exercise = detect_exercise(nb, forced, exercises)
            candidates.setdefault((student, exercise), []).append(nb)
    found = []
    for (student, exercise), paths in sorted(candidates.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if exercise is None:
            for path in paths:
                found.append(Submission(student, path, None, [(
                    "other", f"{path.name}: cannot tell which exercise this is (no exercise in "
                             f"its metadata or file name); use --exercise")]))
            continue
        chosen = max(paths, key=lambda p: (p.stat().st_mtime_ns, str(p)))
        sub = Submission(student, chosen, exercise)
        if len(paths) > 1:
            names = ", ".join(str(p.relative_to(folder)) for p in paths)
            sub.notes.append(("duplicate", f"{len(paths)} notebooks for {exercise} ({names}); "
                                           f"graded the most recently modified, "
                                           f"{chosen.relative_to(folder)}"))
        if student in stray:
            files = ", ".join(stray[student][:5]) + (" ..." if len(stray[student]) > 5 else "")
            sub.notes.append(("tampering" if any(f.endswith(".py") for f in stray[student])
                              else "other", f"the folder also holds {files}: ignored (only the "
                                            f"notebook is graded, with the grader's own tests)"))
        found.append(sub)
    note_look_alikes(found + rejected)
    return found + rejected


def note_look_alikes(subs: list[Submission]) -> None:
    """A note on each submission whose student's name looks like another's (``look_alike``):
    they are graded as two students; the instructor should check who is who."""
    names: dict[str, set[str]] = {}
    for sub in subs:
        names.setdefault(look_alike(sub.student), set()).add(sub.student)
    for sub in subs:
        others = sorted(names[look_alike(sub.student)] - {sub.student})
        if others:
            sub.notes.append(("duplicate", f"the names {ascii(sub.student)} and "
                                           f"{', '.join(map(ascii, others))} look alike: graded "
                                           f"as separate students; check who is who"))


def read_only(path: Path) -> None:
    for p in sorted(path.rglob("*"), reverse=True) + [path]:
        p.chmod(stat.S_IRUSR | (stat.S_IXUSR if p.is_dir() else 0))


def snapshot(subs: list[Submission], exercises: list[str], where: Path) -> Path:
    """Copy the submissions and the exercises' tests into a private read-only folder."""
    where.mkdir(mode=0o700)
    (where / "submissions").mkdir()
    for number, sub in enumerate(subs):
        sub.copy = where / "submissions" / f"{number:05d}.ipynb"
        shutil.copyfile(sub.path, sub.copy)
    for exercise in exercises:
        target = where / "autograder" / exercise
        (target / "tests").mkdir(parents=True)
        shutil.copyfile(AUTOGRADER / exercise / "manifest.json", target / "manifest.json")
        for test in (AUTOGRADER / exercise / "tests").glob("q*.py"):
            shutil.copyfile(test, target / "tests" / test.name)
        handed_out = EXERCISES / exercise / f"{exercise}.ipynb"
        if handed_out.exists():
            shutil.copyfile(handed_out, target / "distributed.ipynb")
        handed_out_zh = ROOT / "zh" / "exercises" / exercise / f"{exercise}.ipynb"  # 中文版
        if handed_out_zh.exists():
            shutil.copyfile(handed_out_zh, target / "distributed_zh.ipynb")
    read_only(where)
    return where


def fmt(x: float) -> str:
    return f"{x:g}"


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def all_notes(sub: Submission) -> list[tuple[str, str]]:
    notes = list(sub.notes)
    for note in (sub.result or {}).get("notes", []):
        notes.append((note["kind"], note["text"]))
    return notes


# The feedback file speaks the language of the notebook the student handed in (the Chinese
# edition's exercises ask for Chinese feedback); the notes are for the instructor too and
# stay in English.
FEEDBACK_LABELS = {
    "en": dict(points="points", graded_file="Graded file", question="Question", points_col="Points",
               notes="Notes", public="public test", hidden="hidden test", passed="passed",
               failed="failed", hidden_not_run="hidden tests: not run (a public test failed, and "
                                               "the question's points are all or nothing)"),
    "zh": dict(points="分", graded_file="评分的文件", question="题目", points_col="得分",
               notes="说明", public="公开测试", hidden="隐藏测试", passed="通过", failed="未通过",
               hidden_not_run="隐藏测试：未运行（有公开测试未通过，而本题的分数全有或全无）"),
}


def write_feedback(student: str, subs: list[Submission], exercises: dict, path: Path,
                   hide_hidden: bool) -> None:
    lines = [f"# Feedback for {shown(student)}", ""]
    for sub in sorted(subs, key=lambda s: s.exercise or ""):
        if sub.exercise is None:
            lines += ["## Not graded", "", *[f"- {n}" for _, n in sub.notes], ""]
            continue
        res, manifest = sub.result, exercises[sub.exercise]
        say = FEEDBACK_LABELS.get(res.get("language"), FEEDBACK_LABELS["en"])
        lines += [f"## {manifest['title']}: {fmt(res['score'])} / {fmt(res['possible'])} "
                  f"{say['points']}", "",
                  f"{say['graded_file']}: `{sub.path.name}` (sha256 {res.get('sha256', '?')[:12]})",
                  "", f"| {say['question']} | {say['points_col']} |", "|---|---|"]
        for q, info in res["questions"].items():
            lines.append(f"| {q} | {fmt(info['score'])} / {fmt(info['possible'])} |")
        lines.append("")
        notes = all_notes(sub)
        if notes:
            lines += [f"### {say['notes']}", "", *[f"- {text}" for _, text in notes], ""]
        for q, info in res["questions"].items():
            lines += [f"### {q}: {fmt(info['score'])} / {fmt(info['possible'])}", ""]
            if info.get("error"):
                lines += [f"- {info['error']}", ""]
            counts = {True: 0, False: 0}
            for case in info["cases"]:
                counts[case["hidden"]] += 1
                kind = say["hidden"] if case["hidden"] else say["public"]
                verdict = say["passed"] if case["passed"] else say["failed"]
                lines.append(f"- {kind} {counts[case['hidden']]}: {verdict}")
                # a failed case's feedback; a passed case's notes (what it left to the
                # instructor, what it measured: the capstone's held-out loss and CPU time)
                if case.get("message") and not (case["hidden"] and hide_hidden):
                    message = case["message"][:4000]
                    lines += ["", "  ```", *[f"  {m}" for m in message.splitlines()], "  ```", ""]
            if info.get("hidden_not_run"):
                lines.append(f"- {say['hidden_not_run']}")
            lines.append("")
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8", errors="replace")


class Report:
    """grades.csv, notes.csv and the feedback files, rewritten as results come in."""

    def __init__(self, out: Path, subs: list[Submission], exercises: dict, hide_hidden: bool):
        self.out, self.subs, self.exercises, self.hide_hidden = out, subs, exercises, hide_hidden
        self.graded = sorted({s.exercise for s in subs if s.exercise})
        self.columns = [f"{short_name(e)}.{q}" for e in self.graded
                        for q in exercises[e]["questions"]]
        self.lock = threading.Lock()
        (out / "feedback").mkdir(parents=True, exist_ok=True)

    def done(self, sub: Submission) -> bool:
        return sub.exercise is None or sub.result is not None

    def update(self, student: str | None = None) -> None:
        with self.lock:
            students = sorted({s.student for s in self.subs})
            rows, note_rows = [], []
            for name in students:
                mine = [s for s in self.subs if s.student == name]
                if not all(self.done(s) for s in mine):
                    continue
                row = {c: "" for c in self.columns}
                total, notes = 0.0, {k: [] for k in NOTE_KINDS}
                for e in self.graded:
                    sub = next((s for s in mine if s.exercise == e), None)
                    if sub is None:
                        notes["other"].append(f"{short_name(e)}: not submitted")
                        continue
                    for q, info in sub.result["questions"].items():
                        row[f"{short_name(e)}.{q}"] = fmt(info["score"])
                    total += sub.result["score"]
                for sub in mine:
                    prefix = f"{short_name(sub.exercise)}: " if sub.exercise and \
                        len(self.graded) > 1 else ""
                    for kind, text in all_notes(sub):
                        notes[kind if kind in notes else "other"].append(prefix + text)
                        note_rows.append([shown(name), sub.exercise or "", kind, text])
                possible = sum(self.exercises[e]["total"] for e in self.graded)
                rows.append([shown(name), *row.values(), fmt(total), fmt(possible),
                             *["\n".join(notes[k]) for k in NOTE_KINDS]])
                if student is None or student == name:
                    write_feedback(name, mine, self.exercises,
                                   self.out / "feedback" / f"{file_name(name)}.md",
                                   self.hide_hidden)
            self._csv("grades.csv", ["student", *self.columns, "total", "possible", *NOTE_KINDS],
                      rows)
            self._csv("notes.csv", ["student", "exercise", "kind", "note"], note_rows)

    def _csv(self, name: str, header: list[str], rows: list[list[str]]) -> None:
        tmp = self.out / (name + ".tmp")
        with open(tmp, "w", newline="", encoding="utf-8", errors="replace") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows([[csv_cell(v) for v in row] for row in rows])
        os.replace(tmp, self.out / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Grade submitted exercise notebooks into a CSV plus per-student feedback.")
    parser.add_argument("submissions", type=Path, help="folder of submitted notebooks")
    parser.add_argument("--out", type=Path, default=Path("results"), help="output folder")
    parser.add_argument("--exercise", help="grade every notebook as this exercise")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded in parallel")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds per submission, everything included (default 600)")
    parser.add_argument("--cell-timeout", type=float, default=60,
                        help="seconds per notebook cell before it is interrupted (default 60)")
    parser.add_argument("--check-time-limit", type=float, default=20,
                        help="seconds per call of the student's code inside a test (default 20)")
    parser.add_argument("--memory-limit", type=int, default=4096,
                        help="MB of address space per sandboxed process (default 4096)")
    parser.add_argument("--hide-hidden", action="store_true",
                        help="feedback says whether hidden tests passed, not their messages")
    parser.add_argument("--fresh", action="store_true",
                        help="grade everything again (ignore results stored in --out/raw)")
    args = parser.parse_args(argv)

    from grading.sandbox import Limits, bwrap_available, kill_all, preflight

    if not bwrap_available():
        parser.error("bubblewrap (bwrap) and setpriv are needed to sandbox the notebooks: "
                     "`make grading-deps` (apt-get install bubblewrap)")
    exercises = known_exercises()
    if args.exercise and args.exercise not in exercises:
        parser.error(f"unknown exercise {args.exercise!r}; known: {', '.join(exercises)}")
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    folder = args.submissions.resolve()
    out = args.out.resolve()
    if out == folder or folder in out.parents:
        parser.error("--out must not be inside the submissions folder")
    subs = discover(folder, args.exercise, exercises)
    fingerprints = {}
    for sub in subs:
        if sub.exercise is None:
            continue
        try:
            fingerprints[sub.path] = hashlib.sha256(sub.path.read_bytes()).hexdigest()
        except (OSError, MemoryError) as exc:  # gone or unreadable since it was found
            sub.exercise = None
            sub.notes.append(("other", f"{sub.path.name} could not be read "
                                       f"({type(exc).__name__}): not graded"))
    todo = [s for s in subs if s.exercise is not None]

    # Everything the grading reads is copied before the first notebook runs.
    os.environ["MHA_CHECK_TIME_LIMIT"] = str(args.check_time_limit)
    import torch

    import mha.course.checks  # noqa: F401  (the check helpers, loaded before any notebook runs)

    torch.set_num_threads(1)  # the jobs are threads; the tests' tensors are tiny
    from grading.worker import Exercise, grade_notebook

    limits = Limits(cell=args.cell_timeout, setup=max(180.0, args.cell_timeout),
                    call=args.check_time_limit, memory=args.memory_limit * 2**20,
                    cpu=int(args.timeout) + 60)
    if todo:  # before the first student: can the sandbox run a notebook at all?
        problem = preflight(limits)
        if problem:
            print(f"Preflight failed: the sandbox could not run a known-good notebook, so no "
                  f"notebook was graded (nothing was written to {out}).\n{problem}",
                  file=sys.stderr, flush=True)
            return 2

    tmp = Path(tempfile.mkdtemp(prefix="mha-grading-"))

    def remove_snapshot() -> None:
        for p in tmp.rglob("*"):
            p.chmod(0o700)
        shutil.rmtree(tmp, ignore_errors=True)

    def stop(signum, frame):  # SIGTERM, Ctrl-C: the stored results stay; a re-run resumes
        kill_all()  # (SIGKILL of this command: bubblewrap's --die-with-parent ends them)
        remove_snapshot()
        print(f"Stopped by {signal.Signals(signum).name}: the results stored in {out / 'raw'} "
              f"are reused by a re-run.", file=sys.stderr, flush=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        shot = snapshot(todo, sorted({s.exercise for s in todo}), tmp / "snapshot")
        loaded = {e: Exercise.load(shot / "autograder" / e,
                                   shot / "autograder" / e / "distributed.ipynb",
                                   shot / "autograder" / e / "distributed_zh.ipynb")
                  for e in {s.exercise for s in todo}}
        keys = {e: ex.key() for e, ex in loaded.items()}
        raw_dir = out / "raw"
        raw_dir.mkdir(parents=True, exist_ok=True)
        report = Report(out, subs, exercises, args.hide_hidden)
        setting = json.dumps([args.timeout, args.cell_timeout, args.check_time_limit,
                              args.memory_limit])

        resumed = 0
        for sub in todo:
            stored = raw_dir / f"{file_name(sub.student)}__{sub.exercise}.json"
            if args.fresh or not stored.exists():
                continue
            try:
                old = json.loads(stored.read_text())
            except ValueError:
                continue
            if old.get("student") == sub.student and \
                    old.get("sha256") == fingerprints[sub.path] and old.get("key") == \
                    keys[sub.exercise] and old.get("setting") == setting:
                sub.result, resumed = old, resumed + 1
        pending = [s for s in todo if s.result is None]
        print(f"Grading {len(pending)} notebooks of {len({s.student for s in subs})} students "
              f"with {args.jobs} jobs" + (f" ({resumed} graded before, reused)" if resumed
                                          else "") + "...", flush=True)
        report.update()

        def work(sub: Submission) -> None:
            raw = sub.copy.read_bytes()
            try:
                result = grade_notebook(raw, loaded[sub.exercise], limits, args.timeout)
            except Exception as exc:  # a bug of the grader: say so, keep going
                result = {"exercise": sub.exercise, "status": "grader error", "score": 0.0,
                          "sha256": hashlib.sha256(raw).hexdigest(), "seconds": 0,
                          "possible": float(exercises[sub.exercise]["total"]),
                          "questions": {q: {"score": 0.0, "possible": float(p), "cases": [],
                                            "error": "the grader failed"} for q, p in
                                        exercises[sub.exercise]["questions"].items()},
                          "notes": [{"kind": "other", "text": f"the grader failed: "
                                     f"{type(exc).__name__}: {exc}"[:300]}]}
            result.update(key=keys[sub.exercise], setting=setting, student=sub.student,
                          submission=str(sub.path))
            write_atomic(raw_dir / f"{file_name(sub.student)}__{sub.exercise}.json",
                         json.dumps(result, indent=1))
            sub.result = result
            report.update(sub.student)
            first = next(iter(result["notes"]), None)
            print(f"  {shown(sub.student)} / {sub.exercise}: {fmt(result['score'])} / "
                  f"{fmt(result['possible'])} ({result['seconds']:g} s)"
                  + (f" - {first['text'][:100]}" if first else ""), flush=True)

        started = time.monotonic()
        pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
        try:
            for future in [pool.submit(work, s) for s in pending]:
                future.result()
        except BaseException:  # Ctrl-C: stop now; the stored results let a re-run resume
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        seconds = time.monotonic() - started
    finally:
        remove_snapshot()

    for sub in todo:  # the originals were never read again; say if one changed meanwhile
        try:
            changed = hashlib.sha256(sub.path.read_bytes()).hexdigest() != fingerprints[sub.path]
        except OSError:
            changed = True
        if changed:
            sub.notes.append(("other", "the submitted file changed while grading ran; the copy "
                                       "taken before grading started was graded"))
    report.update()
    if pending:
        cpu = [sum(s.result.get("cpu_seconds", {}).values()) for s in pending]
        print(f"Graded {len(pending)} notebooks in {seconds:.0f} s "
              f"({seconds / len(pending):.1f} s per notebook with {args.jobs} jobs; CPU per "
              f"notebook {sum(cpu) / len(cpu):.1f} s: sandbox + this process's tests; load "
              f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"Wrote {out / 'grades.csv'}, {out / 'notes.csv'} and the feedback in "
          f"{out / 'feedback'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
