"""How `make notebooks` (nbval, two xdist workers, ``--dist loadscope``) runs the notebooks:
in which order, under which CPU kernels, and how a training cell's numbers are compared.

Order. Each notebook stays one unit of work on one worker, its cells in order; the
recipe passes ``--no-loadscope-reorder`` so that xdist hands the notebooks out in the order
below instead of by their number of cells (which put each chapter beside its Chinese twin).

* Every English notebook comes before every Chinese one (`make notebooks` runs only the
  English ones; a run of both by hand). A Chinese notebook runs the English one's code, and its
  training runs load what the English one stored in the run cache (``mha/course/run_cache.py``);
  side by side, one of the two would wait on the other's lock with a core idle.
* Within an edition, a notebook whose training runs other notebooks load from the run cache
  starts first (its metadata has ``"mha_course": {"others_load_its_runs": true}``: chapter 11's
  model, which chapters 12 and 16 load), so that they never wait on its lock with a core idle
  (chapter 12 waited 79 s for chapter 11 when the longest went first).
* Then the longest notebooks start first, so that the run does not end with one
  worker busy on a long notebook and the other idle. A notebook's length is the execution
  time Jupyter recorded in its cells' metadata when it was last executed (the English
  notebook's, for both editions); one without that record (the exercises) counts as short.

Kernels. The stored outputs were recorded under one set of PyTorch's CPU kernels (AVX-512,
AVX2 or plain code: ``tools/recorded_kernels.json``, written by ``make record``), except the
notebooks whose metadata asks for plain code (:func:`records_under_plain_kernels`: chapters
that train, unless their lesson is how fast the vector kernels are). A run under the
recording's kernels would prove little about another reader's CPU, so ``--other-kernels``
runs every notebook, both editions, under another set (:func:`check_kernels`): the machine's
own when they differ from the
notebook's recording, else the next set down (:func:`second_kernel_set`). A notebook recorded
under plain code therefore trains under the machine's own vector kernels, at full speed. Both
editions of a chapter share their set, so a Chinese chapter still loads the English one's runs.

Comparison. One cell tag, ``nbval-approx``, is for cells whose outputs are results of
training: a run under other CPU kernels rounds its sums differently, and after hundreds of
steps the losses differ in the third or fourth digit. In such a cell the text must still be
the same, and each number must be within ``APPROX_REL`` of the stored one (or ``APPROX_ABS``
of it, for numbers near zero); the cell's own assertions check the claims the prose makes
about those numbers. Every other cell is compared exactly, as nbval does.
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


@lru_cache(maxsize=None)
def others_load_its_runs(notebook: Path) -> bool:
    """Whether other notebooks load this one's training runs (its metadata says so)."""
    try:
        metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return False
    return bool(metadata.get("mha_course", {}).get("others_load_its_runs"))


def notebook_order(path: Path, root: Path) -> tuple[bool, bool, float]:
    """Sort key of a notebook: English first, then those whose runs others load, then the
    longest first."""
    relative = path.resolve().relative_to(root).as_posix()
    english = root / relative.removeprefix("zh/")
    return relative.startswith("zh/"), not others_load_its_runs(english), -recorded_seconds(english)


# Environment variables that make PyTorch (ATen), MKL and oneDNN run plain (non-vector) code.
PLAIN_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
                 "ONEDNN_MAX_CPU_ISA": "SSE41"}


def second_kernel_set(capability: str) -> dict[str, str]:
    """Environment variables that make PyTorch (ATen), MKL and oneDNN use vector kernels other
    than the ones they pick on a CPU whose PyTorch capability is ``capability``: AVX2 on an
    AVX-512 machine, plain (non-vector) code on an AVX2 machine or any other."""
    if capability.startswith("AVX512"):
        return {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                "ONEDNN_MAX_CPU_ISA": "AVX2"}
    return dict(PLAIN_KERNELS)


def kernel_family(capability: str) -> str:
    """The kernel set behind a capability name: AVX512_BF16 and AVX512_VNNI run AVX512's."""
    return "AVX512" if capability.upper().startswith("AVX512") else capability.upper()


def check_kernels(native: str, recorded: str) -> dict[str, str]:
    """The environment that ``make notebooks`` runs every notebook under: nothing (the machine's
    own kernels) where they differ from the recording's, else :func:`second_kernel_set`."""
    if kernel_family(native) != kernel_family(recorded):
        return {}
    return second_kernel_set(native)


KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")
RECORDED_KERNELS = Path(__file__).resolve().parent / "tools" / "recorded_kernels.json"


@lru_cache(maxsize=None)  # asked at every cell's setup; a notebook's metadata does not change in a run
def records_under_plain_kernels(notebook: Path) -> bool:
    """Whether a notebook's outputs are recorded under plain code: its metadata has
    ``"mha_course": {"record_kernels": "plain"}`` (the Chinese twin has the English notebook's
    metadata). Meant for chapters that train for minutes: recorded under plain code, they are
    checked on every vector CPU under its own, faster kernels. Not for a chapter whose lesson is
    the speed of the vector kernels themselves (chapter 8's head widths, chapter 10, the
    appendix): its page shows what the reader's kernels do. A chapter that loads another's
    training runs (``others_load_its_runs``) is recorded under the same kernels as that one."""
    try:
        metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return False
    return metadata.get("mha_course", {}).get("record_kernels") == "plain"


def recording_kernels(notebook: Path) -> dict[str, str]:
    """The kernel variables ``make record`` executes ``notebook`` under (none: the machine's own)."""
    return dict(PLAIN_KERNELS) if records_under_plain_kernels(notebook) else {}


def recorded_capability(notebook: Path | None = None) -> str:
    """The CPU capability a notebook's stored outputs were recorded under: DEFAULT (plain code)
    for one recorded under plain kernels, else the one ``make record`` wrote."""
    if notebook is not None and records_under_plain_kernels(notebook):
        return "DEFAULT"
    return json.loads(RECORDED_KERNELS.read_text(encoding="utf-8"))["cpu_capability"]


def native_capability() -> str:
    """PyTorch's CPU capability on this machine, whatever kernel variables make was given."""
    import subprocess
    import sys
    command = [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"]
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES}
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout.strip()


KERNELS_KEY = pytest.StashKey[str]()
NATIVE_KEY = pytest.StashKey[str]()


def pytest_addoption(parser):
    parser.addoption("--other-kernels", action="store_true",
                     help="run the notebooks under CPU kernels other than those their stored "
                          "outputs were recorded with")


def pytest_configure(config):
    """Choose the notebooks' CPU kernels, and teach nbval the ``nbval-approx`` tag."""
    choose_kernels(config)
    teach_nbval_approx()


def choose_kernels(config) -> None:
    """Find this machine's kernels once; :func:`pytest_runtest_setup` sets each notebook's."""
    if not config.getoption("--other-kernels", default=False):
        return
    native, recorded = native_capability(), recorded_capability()
    config.stash[NATIVE_KEY] = native
    names = {capability: check_kernels(native, capability).get("ATEN_CPU_CAPABILITY", native).upper()
             for capability in (recorded, "DEFAULT")}
    config.stash[KERNELS_KEY] = (f"notebooks run under {names[recorded]} CPU kernels (this machine's: "
                                 f"{native}; outputs recorded under {recorded}), those recorded under "
                                 f"plain code under {names['DEFAULT']}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A notebook's kernel starts when its first cell is set up (nbval) and inherits this
    process's environment: set the notebook's CPU kernels just before."""
    native = item.config.stash.get(NATIVE_KEY, None)
    if native is None or item.path.suffix != ".ipynb":
        return
    kernels = check_kernels(native, recorded_capability(item.path))
    for name in KERNEL_VARIABLES:
        if name in kernels:
            os.environ[name] = kernels[name]
        else:
            os.environ.pop(name, None)


def pytest_report_header(config):
    return config.stash.get(KERNELS_KEY, None)


def pytest_collection_modifyitems(config, items):
    """Order a run of notebooks alone (nbval); leave any other run as collected."""
    if not items or any(item.path.suffix != ".ipynb" for item in items):
        return
    root = Path(config.rootpath).resolve()
    items.sort(key=lambda item: notebook_order(item.path, root))  # stable: cells keep their order


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


def teach_nbval_approx() -> None:
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
