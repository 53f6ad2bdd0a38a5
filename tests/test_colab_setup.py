"""The Colab setup cell: present in every notebook, pointing at the one repository URL,
and able to install `mha` into a Python that does not have it.

The first code cell of every chapter and exercise notebook is the setup cell below (an
exercise may add lines after it). Its repository URL must be `repository.url` from
_config.yml, the one place that URL lives (the book's Colab/Binder buttons use it too).

The install itself is tested the way Colab runs it: a fresh virtualenv without `mha`, the
cell run (unchanged: plain `pip install`, build isolation and all) with MHA_COURSE_SOURCE
pointing at this checkout, then `import mha` from a folder that is not the checkout.
Like Colab, that Python already has pip, torch, numpy and matplotlib: the fresh venv sees
the test runner's packages through a .pth file pointing at a folder of symlinks to them,
from which everything of `mha` is left out. So `mha` is importable only once the cell has
installed it into the fresh venv, which the test checks (mha.__file__).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import types
from pathlib import Path
from unittest import mock

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

SETUP_CELL = """\
# Setup: on Google Colab (or wherever MHA_COURSE_SOURCE is set) install the course package `mha`.
import os, subprocess, sys
if "google.colab" in sys.modules or "MHA_COURSE_SOURCE" in os.environ:
    source = os.environ.get("MHA_COURSE_SOURCE", "git+{url}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", source], check=True)"""


def repository_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["repository"]["url"].rstrip("/")


def expected_cell() -> str:
    return SETUP_CELL.format(url=repository_url())


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if isinstance(node.get("file"), str):
            files.append(node["file"])
        for value in node.values():
            files += _toc_files(value)
    elif isinstance(node, list):
        for item in node:
            files += _toc_files(item)
    return files


def course_notebooks() -> list[Path]:
    """Chapter and exercise notebooks: those in the table of contents, every notebook in
    chapters/, and each exercises/<name>/<name>.ipynb (the student notebook)."""
    found = set(ROOT.glob("chapters/*.ipynb"))
    found |= {p for p in ROOT.glob("exercises/*/*.ipynb") if p.stem == p.parent.name}
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for entry in _toc_files(toc):
        path = ROOT / f"{entry}.ipynb"
        if path.is_file():
            found.add(path)
    return sorted(p for p in found if ".ipynb_checkpoints" not in p.parts)


NOTEBOOKS = course_notebooks()


def first_code_cell(notebook: Path) -> str:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"]
            return "".join(source) if isinstance(source, list) else source
    pytest.fail(f"{notebook.relative_to(ROOT)} has no code cell")


def test_there_are_notebooks_to_check():
    assert NOTEBOOKS, "no chapter or exercise notebook found"


def test_repository_url_is_a_github_repository():
    # The Colab button (colab.research.google.com/github/<org>/<repo>/...) needs GitHub.
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository_url())


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_first_code_cell_is_the_setup_cell(notebook):
    cell = first_code_cell(notebook).rstrip("\n")
    want = expected_cell()
    if notebook.is_relative_to(ROOT / "exercises"):
        head = "\n".join(cell.splitlines()[: len(want.splitlines())])
        assert head == want, (
            f"{notebook.relative_to(ROOT)}: the first code cell must start with the setup "
            f"cell (repository URL from _config.yml):\n{want}\n--- found ---\n{cell}"
        )
    else:
        assert cell == want, (
            f"{notebook.relative_to(ROOT)}: the first code cell must be exactly the setup "
            f"cell (repository URL from _config.yml):\n{want}\n--- found ---\n{cell}"
        )


def _run_cell_in_process(modules: dict, environ: dict) -> list:
    """Run the setup cell here with a stand-in subprocess.run; return the commands."""
    calls = []
    fake_run = mock.Mock(side_effect=lambda cmd, **kw: calls.append((cmd, kw)))
    with mock.patch.dict(sys.modules, modules), mock.patch.dict(os.environ, environ, clear=True), \
            mock.patch("subprocess.run", fake_run):
        exec(compile(expected_cell(), "<setup cell>", "exec"), {})
    return calls


def test_on_colab_the_cell_installs_from_the_repository():
    calls = _run_cell_in_process({"google.colab": types.ModuleType("google.colab")}, {})
    assert calls == [(
        [sys.executable, "-m", "pip", "install", "--quiet", f"git+{repository_url()}"],
        {"check": True},
    )]


def test_elsewhere_the_cell_does_nothing():
    assert "google.colab" not in sys.modules
    assert _run_cell_in_process({}, {}) == []


def test_the_source_can_be_overridden():
    calls = _run_cell_in_process({}, {"MHA_COURSE_SOURCE": "/somewhere/else"})
    assert [cmd for cmd, _ in calls] == [
        [sys.executable, "-m", "pip", "install", "--quiet", "/somewhere/else"]
    ]


# ---------------------------------------------------------------------------------------
# The real install, in a fresh virtualenv.

def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    )
    return Path(out.stdout.strip())


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE", "MHA_COURSE"))}
    env.update(extra)
    return env


def _preinstalled(tmp_path: Path) -> Path:
    """What Colab has before the cell runs (pip, torch, numpy, matplotlib, ...): symlinks to
    the packages of the Python running the tests, minus everything of `mha`."""
    farm = tmp_path / "preinstalled"
    farm.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if "mha" in name or name.startswith("__editable__") or name.endswith(".pth"):
            continue
        (farm / entry.name).symlink_to(entry)
    return farm


def _course_source(tmp_path: Path) -> str:
    """This checkout, as MHA_COURSE_SOURCE: a git URL when it is a git repository (pip
    clones it, as Colab does with the GitHub URL; committed files only), otherwise a copy
    of the folder (pip would otherwise write build/ into the checkout)."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        return f"git+file://{ROOT}"
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".venv", "_build", ".git", ".pytest_cache", ".hypothesis", "*.egg-info", "build",
        "chapters", "exercises", "__pycache__"))
    return str(copy)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_setup_cell_installs_mha_into_a_fresh_venv(tmp_path):
    fresh = tmp_path / "venv"
    # pip, like torch, is among the preinstalled packages (Colab has it): no ensurepip.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True,
                   env=_clean_env())
    python = _venv_python(fresh)
    (_site_packages(python) / "colab_preinstalled.pth").write_text(
        f"{_preinstalled(tmp_path)}\n"
    )
    work = tmp_path / "notebook-folder"  # not the checkout: ./mha must not be importable
    work.mkdir()

    def run(code: str, **env) -> subprocess.CompletedProcess:
        return subprocess.run([str(python), "-c", code], cwd=work, env=_clean_env(**env),
                              capture_output=True, text=True, timeout=900)

    # Colab's situation: torch is there, mha is not.
    before = run(
        "import importlib.util as u\n"
        "assert all(u.find_spec(m) for m in ('torch', 'numpy', 'matplotlib', 'pip'))\n"
        "import mha"
    )
    assert "No module named 'mha'" in before.stderr, before.stderr

    # Outside Colab and without MHA_COURSE_SOURCE the cell changes nothing.
    idle = run(expected_cell())
    assert idle.returncode == 0, idle.stderr
    assert "No module named 'mha'" in run("import mha").stderr

    source = _course_source(tmp_path)
    setup = run(expected_cell(), MHA_COURSE_SOURCE=source)
    assert setup.returncode == 0, f"setup cell failed with {source}:\n{setup.stderr[-4000:]}"

    after = run(
        "import mha, torch\n"
        "from mha.course.example import SENTENCE\n"
        "from mha.course.checks import call, check_tensor\n"
        "q = torch.randn(1, 2, 3, 4)\n"
        "out, w = mha.scaled_dot_product_attention(q, q, q)\n"
        "assert out.shape == (1, 2, 3, 4) and torch.allclose(w.sum(-1), torch.ones(1, 2, 3))\n"
        "print(mha.__file__)\n"
    )
    assert after.returncode == 0, after.stderr[-4000:]
    installed = Path(after.stdout.strip().splitlines()[-1])
    assert installed.is_relative_to(_site_packages(python)), (
        f"mha was imported from {installed}, not from the fresh venv"
    )
