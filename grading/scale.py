"""Measure the grading command on a synthetic class (not a test: it takes minutes).

    python -m grading.scale --students 30 [--exercises ex01_self_attention ex03_masking ...]
        [--jobs 2] [--out /tmp/mha-scale]

Builds a class of ``--students`` students, each handing in every chosen exercise: the solution,
or (every third student) the solution with one of the exercise's known bugs
(``grading/known_bugs.py``), then runs ``python -m grading.grade`` on it and prints, per
exercise, the wall time and the CPU time per submission (sandbox + grader, from each raw
result) and the peak resident memory of the grading command and of its largest sandbox.
``--exercises`` defaults to every exercise except the capstone (whose graded training run alone
costs 35-40 s of CPU per student).
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"


def build_class(where: Path, students: int, exercises: list[str]) -> None:
    from grading.known_bugs import BUGS
    from grading.selfcheck import apply_bug

    for exercise in exercises:
        solution = nbformat.read(AUTOGRADER / exercise / f"{exercise}-solution.ipynb",
                                 as_version=4)
        bugs = BUGS.get(exercise, [])
        for number in range(students):
            nb = solution
            if bugs and number % 3 == 2:
                nb = apply_bug(solution, bugs[number // 3 % len(bugs)][2])
            folder = where / f"student{number:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"{exercise}.ipynb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--exercises", nargs="*")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/mha-scale"))
    args = parser.parse_args(argv)
    exercises = args.exercises or sorted(p.parent.name for p in AUTOGRADER.glob("*/manifest.json")
                                         if p.parent.name != "ex15_capstone")
    shutil.rmtree(args.out, ignore_errors=True)
    subs, results = args.out / "submissions", args.out / "results"
    build_class(subs, args.students, exercises)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grading.grade", str(subs), "--out",
                           str(results), "--jobs", str(args.jobs), "--fresh"], cwd=ROOT)
    wall = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    per: dict[str, list[dict]] = {}
    for raw in (results / "raw").glob("*.json"):
        result = json.loads(raw.read_text())
        per.setdefault(result["exercise"], []).append(result)
    count = sum(len(v) for v in per.values())
    print(f"\n{count} notebooks of {args.students} students graded in {wall:.0f} s with "
          f"{args.jobs} jobs ({wall / max(count, 1):.1f} s per notebook); exit status "
          f"{done.returncode}; peak resident memory of one process (the grader or a sandbox): "
          f"{peak_mb:.0f} MB")
    print(f"{'exercise':28} {'n':>4} {'wall s/nb':>10} {'CPU s/nb':>9} {'score':>7}")
    for exercise, items in sorted(per.items()):
        cpu = [sum(r.get("cpu_seconds", {}).values()) for r in items]
        print(f"{exercise:28} {len(items):4d} {statistics.mean(r['seconds'] for r in items):10.1f} "
              f"{statistics.mean(cpu):9.2f} {statistics.mean(r['score'] for r in items):7.2f}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
