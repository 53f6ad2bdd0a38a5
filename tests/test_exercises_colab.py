"""The exercises' Colab setup cell, run for real in a fresh virtual environment.

On Colab, opening an exercise and running its first cell must install `mha`, otter-grader
and the exercise's public checks (tests/q*.py, fetched from the same source as `mha`; their
feedback helpers come with `mha` itself, as `mha.course.checks`), after which every check
cell works. Here the same cell runs offline:

* a fresh venv (``python -m venv``) in which ``mha`` is NOT importable;
* what Colab has preinstalled (torch, numpy, Jupyter) and otter-grader (which the cell would
  pip-install from PyPI on Colab, where it is missing) come from this checkout's .venv through
  a .pth file pointing at a folder of symlinks to its site-packages, minus ``mha``;
* ``MHA_COURSE_SOURCE`` points at a copy of the checkout (pip must not write ``build/``
  into the real one); pip runs with ``--no-index`` and without build isolation, so nothing is
  downloaded;
* the notebook runs in an empty folder (like Colab's /content: no tests/, no ./mha) in a
  Jupyter kernel started with the fresh venv's Python.

The untouched student notebook must then run without errors with every check reporting a
failure (score 0), and the solution notebook with every check passing.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # a fresh venv, pip and two Jupyter kernels

ROOT = Path(__file__).resolve().parents[1]
EXERCISE = "ex01_self_attention"
PROBE = "import mha, otter\nprint('MHA_FILE', mha.__file__)"


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_", "MHA_COURSE", "JUPYTER"))}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """(python, site-packages, kernel env) of a fresh venv without mha."""
    base = tmp_path_factory.mktemp("colab")
    farm = base / "preinstalled"
    farm.mkdir()
    course_site = Path(sysconfig.get_paths()["purelib"])
    for entry in course_site.iterdir():
        name = entry.name.lower()
        if name.startswith(("__editable__", "mha_course", "mha")) or name.endswith(".pth"):
            continue
        (farm / entry.name).symlink_to(entry)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   env=_clean_env())
    python = venv / "bin" / "python"
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (site / "colab_preinstalled.pth").write_text(f"{farm}\n")

    # A kernel spec that runs the fresh venv's Python, found through JUPYTER_PATH only.
    kernels = base / "jupyter" / "kernels" / "colab-like"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fresh venv", "language": "python"}))

    # The course source: a copy of what pip and the cell need from the checkout.
    source = base / "checkout"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "LICENSE-CONTENT"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "mha", source / "mha",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "exercises", source / "exercises",
                    ignore=shutil.ignore_patterns("__pycache__", ".OTTER_LOG"))
    env = _clean_env(
        MHA_COURSE_SOURCE=str(source), JUPYTER_PATH=str(base / "jupyter"),
        JUPYTER_DATA_DIR=str(base / "jupyter-data"), JUPYTER_CONFIG_DIR=str(base / "jupyter-config"),
        PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1", MPLBACKEND="Agg", OMP_NUM_THREADS="1",
    )
    before = subprocess.run([str(python), "-c", "import mha"], cwd=base, env=env,
                            capture_output=True, text=True)
    assert "No module named 'mha'" in before.stderr, "the fresh venv must not see mha"
    return python, site, env


def _run_in_empty_folder(notebook: Path, folder: Path, python: Path, env: dict) -> nbformat.NotebookNode:
    """Execute a copy of `notebook` (plus a probe cell) alone in `folder` with the venv kernel."""
    folder.mkdir()
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    nbformat.write(nb, folder / notebook.name)
    driver = textwrap.dedent(f"""
        import nbformat
        from nbclient import NotebookClient
        nb = nbformat.read({str(folder / notebook.name)!r}, as_version=4)
        NotebookClient(nb, kernel_name="colab-like", timeout=600, allow_errors=True,
                       resources={{"metadata": {{"path": {str(folder)!r}}}}}).execute()
        nbformat.write(nb, {str(folder / "executed.ipynb")!r})
    """)
    done = subprocess.run([str(python), "-c", driver], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return nbformat.read(folder / "executed.ipynb", as_version=4)


def _manifest_questions() -> list[str]:
    manifest = ROOT / "grading" / "autograder" / EXERCISE / "manifest.json"
    return list(json.loads(manifest.read_text())["questions"])


def _errors(nb) -> list[str]:
    return [f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


def _check_results(nb) -> dict[str, str]:
    """question -> text of its check cell's result."""
    results = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("grader.check("):
            question = cell.source.split('"')[1]
            text = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
            results[question] = text
    return results


def _probe(nb, site: Path) -> None:
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    installed = Path(text.split("MHA_FILE", 1)[1].strip())
    assert installed.is_relative_to(site), f"mha came from {installed}, not the fresh venv"


def test_untouched_exercise_runs_on_a_colab_like_machine(fresh_venv, tmp_path):
    python, site, env = fresh_venv
    student = ROOT / "exercises" / EXERCISE / f"{EXERCISE}.ipynb"
    nb = _run_in_empty_folder(student, tmp_path / "content", python, env)
    assert _errors(nb) == []
    _probe(nb, site)
    fetched = sorted(p.relative_to(tmp_path / "content").as_posix()
                     for p in (tmp_path / "content").rglob("*.py"))
    shipped = sorted(p.relative_to(ROOT / "exercises" / EXERCISE).as_posix()
                     for p in (ROOT / "exercises" / EXERCISE).rglob("*.py"))
    assert fetched == shipped
    results = _check_results(nb)
    assert sorted(results) == sorted(_manifest_questions())
    for question, text in results.items():
        # the stub of a function returns None; the stub of an answer variable is None
        unanswered = "returned None" in text or " is None: " in text
        assert unanswered and "All test cases passed" not in text and "The checks passed" not in text, (question, text)


def test_solution_passes_every_check_on_a_colab_like_machine(fresh_venv, tmp_path):
    python, site, env = fresh_venv
    solution = ROOT / "grading" / "autograder" / EXERCISE / f"{EXERCISE}-solution.ipynb"
    nb = _run_in_empty_folder(solution, tmp_path / "content", python, env)
    assert _errors(nb) == []
    _probe(nb, site)
    results = _check_results(nb)
    assert sorted(results) == sorted(_manifest_questions())
    for question, text in results.items():
        # a prediction passes its check with a note that the grade compares it with the answer
        assert "All test cases passed" in text or "The checks passed. Note:" in text, (question, text)
