"""``make export``: each exercise's Gradescope autograder and PrairieLearn external grader
(issue 21) grade like the local command.

The export of exercise 1 is unpacked into a scratch root laid out as each platform lays it out
(``/autograder/source`` + ``/autograder/submission``; ``/grade/student``), its entry point is run
there (``MHA_GRADESCOPE_ROOT`` / ``MHA_PRAIRIELEARN_ROOT`` move the roots, ``MHA_EXPORT_PYTHON``
is this virtualenv) on a correct notebook and on one with a known bug, and the
``results.json`` each writes is compared with the local grade of the same notebook
(``grading.worker.grade_notebook``, which ``python -m grading.grade`` runs).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the grading package
EXERCISE = "ex01_self_attention"
AUTOGRADER = ROOT / "grading" / "autograder" / EXERCISE
POINTS = json.loads((AUTOGRADER / "manifest.json").read_text())["questions"]


def test_export_writes_both_formats(tmp_path):
    from grading.export import export

    archive, folder = export(EXERCISE, tmp_path)
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        assert {"setup.sh", "run_autograder", "export.json", "grading/worker.py",
                "mha/__init__.py", f"grading/autograder/{EXERCISE}/tests/q1.py"} <= names
        assert not [n for n in names if n.endswith("-solution.ipynb")]  # no solutions shipped
        assert zf.getinfo("run_autograder").external_attr >> 16 & 0o111
    assert (folder / "run.sh").stat().st_mode & 0o111
    assert (folder / "source" / "grading" / "autograder" / EXERCISE / "manifest.json").exists()


def _notebooks(tmp_path: Path) -> dict[str, Path]:
    from grading.known_bugs import BUGS
    from grading.selfcheck import apply_bug

    solution = nbformat.read(AUTOGRADER / f"{EXERCISE}-solution.ipynb", as_version=4)
    entry = next(b for b in BUGS[EXERCISE] if b[0] == "q1" and "scaling" in b[1])
    paths = {"correct": tmp_path / "correct.ipynb", "bug": tmp_path / "bug.ipynb"}
    nbformat.write(solution, paths["correct"])
    nbformat.write(apply_bug(solution, entry[2]), paths["bug"])
    return paths


def _local_grade(path: Path) -> dict:
    from grading.sandbox import Limits
    from grading.worker import EXERCISES, Exercise, grade_notebook

    exercise = Exercise.load(AUTOGRADER, EXERCISES / EXERCISE / f"{EXERCISE}.ipynb")
    return grade_notebook(path.read_bytes(), exercise, Limits(), timeout=600)


def _env(**roots) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MHA_")}
    return {**env, "MHA_EXPORT_PYTHON": sys.executable, **roots}


@pytest.mark.slow
def test_the_entry_points_grade_like_the_local_command(tmp_path):
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")
    from grading.export import export

    archive, folder = export(EXERCISE, tmp_path / "export")
    with zipfile.ZipFile(archive) as zf:  # a Chinese submission is compared with its own handout
        assert f"zh/exercises/{EXERCISE}/{EXERCISE}.ipynb" in zf.namelist()
    for kind, notebook in _notebooks(tmp_path).items():
        local = _local_grade(notebook)
        per_question = {q: info["score"] for q, info in local["questions"].items()}
        assert per_question == ({q: p for q, p in POINTS.items()} if kind == "correct"
                                else {**POINTS, "q1": 0.0})

        gradescope = tmp_path / kind / "autograder"  # Gradescope's layout
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(gradescope / "source")
        (gradescope / "submission").mkdir()
        shutil.copyfile(notebook, gradescope / "submission" / f"{EXERCISE}.ipynb")
        done = subprocess.run(["bash", str(gradescope / "source" / "run_autograder")],
                              env=_env(MHA_GRADESCOPE_ROOT=str(gradescope)),
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        results = json.loads((gradescope / "results" / "results.json").read_text())
        assert results["score"] == local["score"]
        assert {t["name"]: t["score"] for t in results["tests"]} == per_question
        for test in results["tests"]:
            assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
            assert test["status"] == ("passed" if test["score"] == test["max_score"] else "failed")

        grade = tmp_path / kind / "grade"  # PrairieLearn's layout
        (grade / "student").mkdir(parents=True)
        shutil.copyfile(notebook, grade / "student" / f"{EXERCISE}.ipynb")
        done = subprocess.run(["bash", str(folder / "run.sh")],
                              env=_env(MHA_PRAIRIELEARN_ROOT=str(grade)),
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        raw = (grade / "results" / "results.json").read_bytes()
        assert len(raw) < 2**20
        results = json.loads(raw)
        assert results["gradable"] is True
        assert results["score"] == pytest.approx(local["score"] / local["possible"])
        assert {t["name"]: t["points"] for t in results["tests"]} == per_question
        if kind == "bug":
            q1 = next(t for t in results["tests"] if t["name"] == "q1")
            assert "public test 1: failed" in q1["output"] and "not scaled" in q1["output"]
