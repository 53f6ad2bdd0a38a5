"""Export each exercise's autograder to Gradescope and to PrairieLearn (``make export``).

    python -m grading.export [--out dist/export] [EXERCISE ...]

writes, per exercise:

* ``gradescope/<exercise>/autograder.zip``: ``setup.sh`` and ``run_autograder`` at its root
  (Gradescope's autograder format; it unpacks the zip into ``/autograder/source``), next to the
  ``mha`` package, the grader (``grading/*.py``), the exercise's tests and manifest, and the
  handed-out notebook.
  ``run_autograder`` grades the notebook in ``/autograder/submission`` and writes
  ``/autograder/results/results.json`` (``score``, ``output``, ``tests[]`` with ``name``,
  ``score``, ``max_score``, ``status``, ``output``, ``visibility``);
* ``prairielearn/<exercise>/``: an external-grader folder (``run.sh`` and the same
  ``source/``): it grades the notebook in ``/grade/student`` and writes
  ``/grade/results/results.json`` (``gradable``, ``score`` in [0, 1], ``tests[]``; under 1 MB).

Both run the grading core of ``python -m grading.grade``: ``grading.worker.grade_notebook``,
the notebook in a bubblewrap sandbox, the tests in the grader, after the same preflight. Hidden
tests say only whether they passed (as ``--hide-hidden``). The roots can be moved for a trial
run: ``MHA_GRADESCOPE_ROOT`` (default ``/autograder``), ``MHA_PRAIRIELEARN_ROOT`` (default
``/grade``), and ``MHA_EXPORT_PYTHON`` is the interpreter the entry points use.

Whether bubblewrap can create its namespaces inside a platform's container depends on how the
platform runs it (Docker's default seccomp profile refuses them): the preflight then fails and
the entry point says so, instead of grading anyone zero.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"
GRADER_FILES = ("__init__.py", "sandbox.py", "sandbox_child.py", "worker.py", "submission.py",
                "unseen_bugs.py", "export.py")
MAX_RESULTS_BYTES = 900_000  # PrairieLearn refuses results over 1 MB

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends bubblewrap util-linux python3 python3-venv python3-pip
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install -r /autograder/source/requirements.txt
/autograder/venv/bin/pip install -e /autograder/source
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope's entry point: grade /autograder/submission/*.ipynb into
# /autograder/results/results.json (MHA_GRADESCOPE_ROOT moves /autograder for a trial run).
set -euo pipefail
ROOT="${MHA_GRADESCOPE_ROOT:-/autograder}"
PYTHON="${MHA_EXPORT_PYTHON:-$ROOT/venv/bin/python}"
cd "$ROOT/source"
PYTHONPATH="$ROOT/source" exec "$PYTHON" -m grading.export --platform gradescope --root "$ROOT"
"""

RUN_PRAIRIELEARN = """#!/usr/bin/env bash
# PrairieLearn's external grader entry point: grade /grade/student/*.ipynb into
# /grade/results/results.json (MHA_PRAIRIELEARN_ROOT moves /grade for a trial run).
set -euo pipefail
ROOT="${MHA_PRAIRIELEARN_ROOT:-/grade}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${MHA_EXPORT_PYTHON:-python3}"
mkdir -p "$ROOT/results"
cd "$HERE/source"
PYTHONPATH="$HERE/source" exec "$PYTHON" -m grading.export --platform prairielearn --root "$ROOT"
"""

PRAIRIELEARN_README = """# {exercise}: PrairieLearn external grader

Put this folder in the course's `serverFilesCourse/` and point the question's `info.json` at it:

```json
"externalGradingOptions": {{
    "enabled": true,
    "image": "python:3.11",
    "serverFilesCourse": ["{exercise}/"],
    "entrypoint": "/grade/serverFilesCourse/{exercise}/run.sh",
    "timeout": 900
}}
```

The image needs bubblewrap and the packages of `source/requirements.txt`; the student's file
(`{exercise}.ipynb`) arrives in `/grade/student`, the result is written to
`/grade/results/results.json`.
"""


# ----------------------------------------------------------------------------- building

def source_tree(exercise: str, target: Path) -> None:
    """What both platforms need to grade ``exercise``: mha, the grader, the tests."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "mha", target / "mha", ignore=ignore)
    (target / "grading" / "autograder").mkdir(parents=True)
    for name in GRADER_FILES:
        shutil.copyfile(ROOT / "grading" / name, target / "grading" / name)
    shutil.copytree(AUTOGRADER / exercise, target / "grading" / "autograder" / exercise,
                    ignore=shutil.ignore_patterns("*-solution.ipynb", "__pycache__"))
    # Both editions' handouts: a submission is compared with the one it came from.
    for edition in ("exercises", "zh/exercises"):
        handed_out = ROOT / edition / exercise / f"{exercise}.ipynb"
        if handed_out.exists():
            (target / edition / exercise).mkdir(parents=True)
            shutil.copyfile(handed_out, target / edition / exercise / handed_out.name)
    for name in ("requirements.txt", "pyproject.toml"):
        if (ROOT / name).exists():
            shutil.copyfile(ROOT / name, target / name)
    (target / "export.json").write_text(json.dumps({"exercise": exercise}))


def write_script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def export(exercise: str, out: Path) -> tuple[Path, Path]:
    """Write the Gradescope zip and the PrairieLearn folder of ``exercise``."""
    staging = out / "gradescope" / exercise / "staging"
    shutil.rmtree(staging, ignore_errors=True)
    source_tree(exercise, staging)  # Gradescope unpacks the zip into /autograder/source
    write_script(staging / "setup.sh", SETUP_SH)
    write_script(staging / "run_autograder", RUN_AUTOGRADER)
    archive = out / "gradescope" / exercise / "autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(staging.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(staging)), (2026, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if os.access(path, os.X_OK) else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
    shutil.rmtree(staging)

    folder = out / "prairielearn" / exercise
    shutil.rmtree(folder, ignore_errors=True)
    source_tree(exercise, folder / "source")
    write_script(folder / "run.sh", RUN_PRAIRIELEARN)
    (folder / "README.md").write_text(PRAIRIELEARN_README.format(exercise=exercise))
    return archive, folder


# ----------------------------------------------------------------------------- grading

def grade_one(notebook: Path, exercise: str) -> dict:
    """The grading core of ``python -m grading.grade`` on one notebook (preflight first)."""
    from grading.sandbox import Limits, preflight
    from grading.worker import EXERCISES, Exercise, grade_notebook

    limits = Limits()
    problem = preflight(limits)
    if problem:
        raise RuntimeError(f"the grading sandbox does not work in this container: {problem}")
    os.environ.setdefault("MHA_CHECK_TIME_LIMIT", str(limits.call))
    loaded = Exercise.load(AUTOGRADER / exercise, EXERCISES / exercise / f"{exercise}.ipynb",
                           ROOT / "zh" / "exercises" / exercise / f"{exercise}.ipynb")
    return grade_notebook(notebook.read_bytes(), loaded, limits, timeout=600)


def case_lines(info: dict) -> list[str]:
    """Each test of a question: public failures with their message, hidden ones pass/fail, and
    the notes of passed tests (what a check left to the grade, the capstone's loss and CPU time)."""
    lines, counts = [], {True: 0, False: 0}
    if info.get("error"):
        lines.append(info["error"])
    for case in info.get("cases", []):
        counts[case["hidden"]] += 1
        kind = "hidden" if case["hidden"] else "public"
        verdict = "passed" if case["passed"] else "failed"
        lines.append(f"{kind} test {counts[case['hidden']]}: {verdict}")
        if case.get("message") and (case["passed"] or not case["hidden"]):
            lines += ["    " + m for m in case["message"][:4000].splitlines()]
    if info.get("hidden_not_run"):  # grade.py's FEEDBACK_LABELS text: grade.py is not exported
        lines.append("hidden tests: not run (a public test failed, and the question's points "
                     "are all or nothing)")
    return lines


def notes_text(result: dict) -> str:
    return "\n".join(f"[{n['kind']}] {n['text']}" for n in result.get("notes", []))


def gradescope_results(result: dict | None, why: str = "") -> dict:
    if result is None:
        return {"score": 0, "output": why, "tests": []}
    tests = [{"name": q, "score": info["score"], "max_score": info["possible"],
              "status": "passed" if info["score"] == info["possible"] else "failed",
              "output": "\n".join(case_lines(info)), "visibility": "visible"}
             for q, info in result["questions"].items()]
    return {"score": result["score"], "output": notes_text(result), "tests": tests,
            "execution_time": result.get("seconds", 0)}


def prairielearn_results(result: dict | None, why: str = "") -> dict:
    if result is None:
        return {"gradable": False, "score": 0.0, "message": why, "tests": []}
    tests = [{"name": q, "points": info["score"], "max_points": info["possible"],
              "output": "\n".join(case_lines(info))}
             for q, info in result["questions"].items()]
    results = {"gradable": True, "score": result["score"] / result["possible"]
               if result["possible"] else 0.0, "message": "", "output": notes_text(result),
               "tests": tests}
    while len(json.dumps(results).encode()) > MAX_RESULTS_BYTES:  # keep it under 1 MB
        longest = max(tests + [results], key=lambda t: len(t.get("output", "")))
        longest["output"] = longest["output"][: len(longest["output"]) // 2] + "\n[cut]"
    return results


def run_platform(platform: str, root: Path) -> int:
    exercise = json.loads((ROOT / "export.json").read_text())["exercise"]
    inbox = root / ("submission" if platform == "gradescope" else "student")
    (root / "results").mkdir(parents=True, exist_ok=True)
    notebooks = sorted(inbox.glob("*.ipynb"))
    result, why = None, ""
    if not notebooks:
        why = f"no notebook (.ipynb) was submitted; expected {exercise}.ipynb"
    else:
        chosen = next((n for n in notebooks if n.name == f"{exercise}.ipynb"), notebooks[0])
        try:
            result = grade_one(chosen, exercise)
        except RuntimeError as exc:  # the container cannot sandbox: say so, grade nobody
            why = str(exc)
    make = gradescope_results if platform == "gradescope" else prairielearn_results
    (root / "results" / "results.json").write_text(json.dumps(make(result, why), indent=1))
    if result is None and why.startswith("the grading sandbox"):
        print(why, file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exercises", nargs="*", help="default: every exercise")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "export")
    parser.add_argument("--platform", choices=("gradescope", "prairielearn"),
                        help="(inside an export) grade as this platform's entry point")
    parser.add_argument("--root", type=Path, help="(with --platform) the platform's folder")
    args = parser.parse_args(argv)
    if args.platform:
        return run_platform(args.platform, args.root)
    known = sorted(p.parent.name for p in AUTOGRADER.glob("*/manifest.json"))
    chosen = args.exercises or known
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"unknown exercise(s) {', '.join(unknown)}; known: {', '.join(known)}")
    started = time.monotonic()
    for exercise in chosen:
        archive, folder = export(exercise, args.out)
        print(f"{exercise}: {archive.relative_to(args.out)} "
              f"({archive.stat().st_size / 1e6:.1f} MB), {folder.relative_to(args.out)}/")
    print(f"Exported {len(chosen)} exercise(s) to {args.out} in "
          f"{time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
