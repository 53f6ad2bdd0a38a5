"""How `make notebooks` (nbval, two xdist workers, ``--dist loadscope``) runs the notebooks:
in which order, under which CPU kernels, and how a training cell's numbers are compared.

Order. Each notebook stays one unit of work on one worker, its cells in order; the
recipe passes ``--no-loadscope-reorder`` so that xdist hands the notebooks out in the order
below instead of by their number of cells (which put each chapter beside its Chinese twin).

* Every English notebook comes before every Chinese one. A Chinese chapter runs the English
  one's code, and its training runs load what the English one stored in the run cache
  (``mha/course/run_cache.py``); side by side, one of the two would wait on the other's lock
  with a core idle.
* Within an edition the longest notebooks start first, so that the run does not end with one
  worker busy on a long notebook and the other idle. A notebook's length is the execution
  time Jupyter recorded in its cells' metadata when it was last executed (the English
  notebook's, for both editions); one without that record (the exercises) counts as short.

Kernels. ``--second-kernels`` runs the Chinese notebooks under CPU kernels other than the
ones the English notebooks get (:func:`second_kernel_set`), so that one green run means the
stored outputs hold under both. Each notebook's kernel inherits the environment set just
before it starts. The run cache keys a run by its kernels, so the Chinese chapters then train
for themselves, and English-first is dropped: the longest notebooks start first.

Comparison. One cell tag, ``nbval-approx``, is for cells whose outputs are results of
training: a run under other CPU kernels (AVX-512, AVX2, plain code) rounds its sums
differently, and after hundreds of steps the losses differ in the third or fourth digit.
In such a cell the text must still be the same, and each number must be within
``APPROX_REL`` of the stored one (or ``APPROX_ABS`` of it, for numbers near zero); the cell's
own assertions check the claims the prose makes about those numbers. Every other cell is
compared exactly, as nbval does.
"""
from __future__ import annotations

import copy
import json
import math
import os
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import pytest

APPROX_TAG = "nbval-approx"
APPROX_REL = 0.05
APPROX_ABS = 0.02
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


@lru_cache(maxsize=None)
def recorded_seconds(notebook: Path) -> float:
    """Sum of the execution times recorded in a notebook's code cells (0 without a record)."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return 0.0
    total = 0.0
    for cell in cells:
        times = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in times and "shell.execute_reply" in times:
            start, end = (datetime.fromisoformat(times[k].replace("Z", "+00:00"))
                          for k in ("iopub.execute_input", "shell.execute_reply"))
            total += (end - start).total_seconds()
    return total


def notebook_order(path: Path, root: Path, second_kernels: bool = False) -> tuple[bool, float]:
    """Sort key of a notebook: English first, then the longest first. Under
    ``--second-kernels`` the longest first only: a Chinese chapter then computes its own
    training runs (the run cache keeps runs of other kernels apart), so it waits for nobody."""
    relative = path.resolve().relative_to(root).as_posix()
    chinese = relative.startswith("zh/") and not second_kernels
    return chinese, -recorded_seconds(root / relative.removeprefix("zh/"))


def second_kernel_set(capability: str) -> dict[str, str]:
    """Environment variables that make PyTorch (ATen), MKL and oneDNN use vector kernels other
    than the ones they pick on a CPU whose PyTorch capability is ``capability``: AVX2 on an
    AVX-512 machine, plain (non-vector) code on an AVX2 machine or any other."""
    if capability.startswith("AVX512"):
        return {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                "ONEDNN_MAX_CPU_ISA": "AVX2"}
    return {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
            "ONEDNN_MAX_CPU_ISA": "SSE41"}


KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")
FIRST_KERNELS = {name: os.environ.get(name) for name in KERNEL_VARIABLES}  # as make was given them


@lru_cache(maxsize=None)
def first_capability() -> str:
    """PyTorch's CPU capability under the environment make was given (AVX512, AVX2, ...)."""
    import subprocess
    import sys
    command = [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"]
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES}
    env.update({k: v for k, v in FIRST_KERNELS.items() if v is not None})
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout.strip()


def pytest_addoption(parser):
    parser.addoption("--second-kernels", action="store_true",
                     help="run the Chinese notebooks under CPU kernels other than the English ones'")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before a notebook's first cell starts its kernel: choose that kernel's CPU kernels."""
    if item.path.suffix != ".ipynb" or not item.config.getoption("--second-kernels"):
        return
    root = Path(item.config.rootpath).resolve()
    chinese = item.path.resolve().relative_to(root).as_posix().startswith("zh/")
    kernels = second_kernel_set(first_capability()) if chinese else FIRST_KERNELS
    for name in KERNEL_VARIABLES:
        if kernels.get(name) is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = kernels[name]


def pytest_collection_modifyitems(config, items):
    """Order a run of notebooks alone (nbval); leave any other run as collected."""
    if not items or any(item.path.suffix != ".ipynb" for item in items):
        return
    root = Path(config.rootpath).resolve()
    second = config.getoption("--second-kernels")
    items.sort(key=lambda item: notebook_order(item.path, root, second))  # stable: cells keep their order


def _texts(outputs):
    """Every compared string of a cell's outputs, in order, as (output, place, key) triples."""
    for output in outputs:
        if isinstance(output.get("text"), str):
            yield output, output, "text"
        for key, value in output.get("data", {}).items():
            if isinstance(value, str) and not key.startswith("image/"):
                yield output, output["data"], key


def approximate(test, ref):
    """``test`` with each number replaced by the stored one when the two are close.

    The numbers are paired in order of appearance over all the cell's text outputs. If their
    count differs, or any pair is not close, ``test`` is returned unchanged, so that nbval's
    exact comparison fails and shows the difference.
    """
    ref_numbers = [m.group() for _, place, key in _texts(ref) for m in NUMBER.finditer(place[key])]
    test = copy.deepcopy(test)  # nbval's outputs are NotebookNodes: keep their type
    test_numbers = [m.group() for _, place, key in _texts(test) for m in NUMBER.finditer(place[key])]
    if len(ref_numbers) != len(test_numbers) or not all(
            math.isclose(float(a), float(b), rel_tol=APPROX_REL, abs_tol=APPROX_ABS)
            for a, b in zip(ref_numbers, test_numbers)):
        return test
    stored = iter(ref_numbers)
    for _, place, key in _texts(test):
        place[key] = NUMBER.sub(lambda _: next(stored), place[key])
    return test


def pytest_configure(config):
    """Teach nbval the ``nbval-approx`` tag (see the module docstring)."""
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval not installed: nothing to teach
        return
    if getattr(IPyNbCell.compare_outputs, "approx_aware", False):
        return
    exact = IPyNbCell.compare_outputs

    def compare_outputs(self, test, ref, skip_compare=None):
        if APPROX_TAG in self.cell.get("metadata", {}).get("tags", []):
            test = approximate(test, ref)
        return exact(self, test, ref, skip_compare)

    compare_outputs.approx_aware = True
    IPyNbCell.compare_outputs = compare_outputs
