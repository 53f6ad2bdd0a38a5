"""The grading command starts only when its sandbox works, and leaves nothing behind (issue 21).

* Preflight: before the first student, one known-good cell runs in the sandbox; when the sandbox
  cannot run it (here: a memory limit too small for Python), the command stops with the reason
  and what to check, and grades nobody (no class of zeros).
* A virtualenv reached through a symlink (``.venv -> /opt/course-venv`` on a shared JupyterHub)
  grades like the real one.
* Stopping the command (SIGTERM, SIGINT, or SIGKILL) ends every sandbox it started.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
EXERCISE = "ex01_self_attention"
SOLUTION = ROOT / "grading" / "autograder" / EXERCISE / f"{EXERCISE}-solution.ipynb"


@pytest.fixture(autouse=True)
def _needs_bwrap():
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")


def _command(subs: Path, out: Path, *extra: str, python: str = sys.executable) -> list[str]:
    return [python, "-m", "grading.grade", str(subs), "--out", str(out), "--jobs", "1",
            "--cell-timeout", "120", *extra]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MHA_COURSE")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _class(tmp_path: Path, extra_cell: str | None = None) -> Path:
    subs = tmp_path / "submissions"
    subs.mkdir()
    text = SOLUTION.read_text()
    if extra_cell:
        import nbformat

        nb = nbformat.reads(text, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(extra_cell))
        text = nbformat.writes(nb)
    (subs / "alice.ipynb").write_text(text)
    return subs


def test_a_sandbox_that_cannot_run_stops_the_command_before_anyone_is_graded(tmp_path):
    subs, out = _class(tmp_path), tmp_path / "results"
    done = subprocess.run(_command(subs, out, "--memory-limit", "1"), cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Preflight failed" in done.stderr and "--memory-limit" in done.stderr
    assert not (out / "grades.csv").exists()


def test_a_symlinked_virtualenv_grades_like_the_real_one(tmp_path):
    link = tmp_path / "hub" / ".venv"
    link.parent.mkdir()
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    subs, out = _class(tmp_path), tmp_path / "results"
    done = subprocess.run(_command(subs, out, python=str(link / "bin" / "python")), cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        row = next(csv.DictReader(f))
    possible = sum(json.loads((SOLUTION.parent / "manifest.json").read_text())["questions"].values())
    assert row["student"] == "alice" and float(row["total"]) == float(row["possible"]) == possible, row


def _descendants(pid: int) -> dict[int, str]:
    """{pid: start time} of every process below ``pid``."""
    children: dict[int, list[int]] = {}
    starts = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        starts[int(stat.parent.name)] = fields[19]
    found, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = starts.get(child, "")
            todo.append(child)
    return found


def _alive(processes: dict[int, str]) -> list[int]:
    alive = []
    for pid, start in processes.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == start and fields[0] != "Z":
            alive.append(pid)
    return alive


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopping_the_command_ends_every_sandbox(tmp_path, how):
    subs = _class(tmp_path, "import time\nwhile True:\n    time.sleep(1)")
    out = tmp_path / "results"
    grader = subprocess.Popen(_command(subs, out), cwd=ROOT, env=_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sandboxes: dict[int, str] = {}
        for _ in range(600):  # until the notebook's sandbox runs (preflight's is gone by then)
            time.sleep(0.5)
            below = _descendants(grader.pid)
            if (out / "grades.csv").exists() and any("sandbox_child" in _cmdline(p)
                                                     for p in below):
                sandboxes = below
                break
        assert sandboxes, "the sandbox never started"
        time.sleep(10)  # the notebook's cells are running (its endless loop)
        sandboxes = _descendants(grader.pid)
        grader.send_signal(how)
        grader.wait(timeout=60)
        deadline = time.monotonic() + 20
        while _alive(sandboxes) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _alive(sandboxes) == []
    finally:
        if grader.poll() is None:
            grader.kill()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
