"""Regenerate the graded exercises from their master notebooks.

    python -m grading.assign                 # every master in grading/masters/
    python -m grading.assign ex03_masking    # only some
    python -m grading.assign --no-execute    # skip re-executing the student notebooks

For each master ``grading/masters/<exercise>.ipynb`` (solutions and tests, in otter-grader's
format) this runs ``otter assign`` in a temporary directory and writes:

* ``exercises/<exercise>/<exercise>.ipynb``: the student notebook, with its Colab setup cell
  completed (download of otter-grader and of this exercise's checks), deterministic cell ids,
  executed in place so that its stored outputs are what ``pytest --nbval`` expects;
* ``exercises/<exercise>/tests/q*.py``: the public tests (their feedback helpers are
  ``mha.course.checks``, installed with the course package);
* ``grading/autograder/<exercise>/``: what the instructor command needs: ``tests/q*.py`` (public
  *and* hidden tests), ``otter_config.json``, the solution
  notebook ``<exercise>-solution.ipynb`` and ``manifest.json`` (points per question, and
  hashes that let the test suite notice a master edited without regenerating).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MASTERS = ROOT / "grading" / "masters"
AUTOGRADER = ROOT / "grading" / "autograder"
EXERCISES = ROOT / "exercises"

# The first five lines are the course-wide Colab setup cell (identical in every notebook).
SETUP_HEAD = '''\
# Setup: on Google Colab (or wherever MHA_COURSE_SOURCE is set) install the course package `mha`.
import os, subprocess, sys
if "google.colab" in sys.modules or "MHA_COURSE_SOURCE" in os.environ:
    source = os.environ.get("MHA_COURSE_SOURCE", "git+https://github.com/mha-course/multi-head-attention")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", source], check=True)'''

SETUP_TAIL = '''
    # The checks need otter-grader and this exercise's tests, taken from the same source:
    # a local checkout (a path) or the GitHub repository (git+https://github.com/OWNER/REPO[@REF]).
    import importlib.util, shutil, urllib.request
    if importlib.util.find_spec("otter") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "otter-grader==7.0.0"], check=True)
    repo, _, ref = source.removeprefix("git+").removeprefix("file://").partition("@")
    for name in {files}:
        if not os.path.exists(name):
            os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
            if os.path.isdir(repo):
                shutil.copyfile(os.path.join(repo, "exercises", "{exercise}", name), name)
            else:
                raw = repo.removesuffix(".git").replace("https://github.com/", "https://raw.githubusercontent.com/")
                urllib.request.urlretrieve(f"{{raw}}/{{ref or 'main'}}/exercises/{exercise}/{{name}}", name)'''

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def book_url() -> str:
    """The published book (GitHub Pages of ``repository.url`` in _config.yml), ending in /.

    Exercise notebooks link to their chapter there: a downloaded copy or a Colab tab has no
    ``../../chapters/`` next to it."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    owner, repo = config["repository"]["url"].rstrip("/").split("/")[-2:]
    return f"https://{owner.lower()}.github.io/{repo}/"


def setup_cell_source(exercise: str, files: list[str]) -> str:
    return SETUP_HEAD + SETUP_TAIL.format(exercise=exercise, files=repr(files))


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def notebook_source_digest(path: Path) -> str:
    """Hash of a notebook's cell types and sources (outputs and metadata ignored)."""
    nb = nbformat.read(path, as_version=4)
    text = json.dumps([[c.cell_type, c.source] for c in nb.cells])
    return sha256_bytes(text.encode())


def generated_digests(exercise: str) -> dict[str, str]:
    """Hashes of every generated file of one exercise (notebooks by their sources)."""
    digests = {}
    for base in (EXERCISES / exercise, AUTOGRADER / exercise):
        for path in sorted(base.rglob("*")):
            if not path.is_file() or path.name == "manifest.json" or "__pycache__" in path.parts \
                    or path.name == ".OTTER_LOG":
                continue
            key = path.relative_to(ROOT).as_posix()
            digests[key] = (notebook_source_digest(path) if path.suffix == ".ipynb"
                            else sha256_bytes(path.read_bytes()))
    return digests


def question_points(tests_dir: Path) -> dict[str, float]:
    from otter.test_files import create_test_file
    from otter.nbmeta_config import NBMetadataConfig

    points = {}
    for path in sorted(tests_dir.glob("q*.py"), key=lambda p: int(p.stem[1:])):
        test = create_test_file(str(path), NBMetadataConfig())
        points[test.name] = test.possible
    return points


def _finish_notebook(nb, exercise: str, files: list[str]) -> None:
    """Complete the setup cell, set the metadata and give every cell a stable id."""
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    if not first_code.source.startswith(SETUP_HEAD):
        raise ValueError(f"{exercise}: the first code cell of the master is not the setup cell")
    first_code.source = setup_cell_source(exercise, files)
    short = exercise.split("_")[0]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{short}-{i:02d}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
        "mha_course": {"exercise": exercise},
    }
    nb.nbformat, nb.nbformat_minor = 4, 5


def execute_in_place(path: Path) -> None:
    """Run the notebook from its folder (as nbval does) and store its outputs."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    env_backup = os.environ.pop("MHA_COURSE_SOURCE", None)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        if env_backup is not None:
            os.environ["MHA_COURSE_SOURCE"] = env_backup
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    (path.parent / ".OTTER_LOG").unlink(missing_ok=True)


def assign(exercise: str, execute: bool = True) -> dict:
    master = MASTERS / f"{exercise}.ipynb"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copy(master, tmp / master.name)
        subprocess.run(
            [sys.executable, "-m", "otter", "assign", "--no-pdfs", master.name, "dist"],
            cwd=tmp, check=True, stdout=subprocess.DEVNULL,
        )
        student_dir, ag_dir = tmp / "dist" / "student", tmp / "dist" / "autograder"
        public_tests = sorted(student_dir.glob("tests/q*.py"), key=lambda p: int(p.stem[1:]))
        files = [f"tests/{p.name}" for p in public_tests]

        # student side
        out = EXERCISES / exercise
        if (out / "tests").exists():
            shutil.rmtree(out / "tests")
        (out / "tests").mkdir(parents=True)
        for p in public_tests:
            shutil.copy(p, out / "tests" / p.name)
        nb = nbformat.read(student_dir / master.name, as_version=4)
        _finish_notebook(nb, exercise, files)
        nbformat.write(nb, out / master.name)

        # instructor side
        ag = AUTOGRADER / exercise
        if ag.exists():
            shutil.rmtree(ag)
        (ag / "tests").mkdir(parents=True)
        for p in sorted(ag_dir.glob("tests/q*.py")):
            shutil.copy(p, ag / "tests" / p.name)
        config = ag_dir / "otter_config.json"
        (ag / "otter_config.json").write_text(config.read_text() if config.exists() else "{}\n")
        solution = nbformat.read(ag_dir / master.name, as_version=4)
        _finish_notebook(solution, exercise, files)
        nbformat.write(solution, ag / f"{exercise}-solution.ipynb")

    if execute:
        execute_in_place(out / master.name)
    title = next(c for c in nb.cells if c.cell_type == "markdown").source.splitlines()[0]
    manifest = {
        "exercise": exercise,
        "title": re.sub(r"^#\s*", "", title),
        "questions": question_points(ag / "tests"),
        "master_sha256": sha256_bytes(master.read_bytes()),
        "generated": generated_digests(exercise),
    }
    manifest["total"] = sum(manifest["questions"].values())
    (ag / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exercises", nargs="*", help="exercise names (default: every master)")
    parser.add_argument("--no-execute", action="store_true",
                        help="do not re-execute the student notebooks")
    args = parser.parse_args(argv)
    names = args.exercises or sorted(p.stem for p in MASTERS.glob("ex*.ipynb"))
    for name in names:
        manifest = assign(name, execute=not args.no_execute)
        print(f"{name}: {len(manifest['questions'])} questions, {manifest['total']:g} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
