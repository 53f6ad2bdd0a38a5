"""The grader's side of the sandbox holds whatever the notebook's process does (issue 21).

Each test starts a real bubblewrap sandbox (``grading.sandbox.Sandbox``) and lets a cell attack
the boundary from inside: make a user namespace, stop reading the grader's requests, send a
reply crafted to grow on the grader's side. The grader must get an error, in time, and never
the amplified value. (The same attacks on the decoder alone, without a sandbox, are in
``test_grading_wire.py``.)
"""
from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the grading package
from grading.sandbox import Limits, Namespace, Sandbox, SandboxError

pytestmark = pytest.mark.slow

LIMITS = Limits(cell=10, call=5, start=120)


def _within(seconds: float, fn):
    """``fn()``'s outcome ("value", x) or ("error", exc); ("hung", None) past ``seconds``."""
    outcome = ["hung", None]

    def run():
        try:
            outcome[:] = ["value", fn()]
        except BaseException as exc:  # noqa: BLE001 (the outcome is what the test checks)
            outcome[:] = ["error", exc]

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return tuple(outcome)


@pytest.fixture
def sandbox():
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")
    box = Sandbox(LIMITS, time.monotonic() + 300)
    box.start()
    yield box
    box.kill("test done")


def run(box: Sandbox, source: str) -> dict:
    reply = box.request({"op": "run", "source": source}, LIMITS.cell)
    assert reply.get("error") is None, reply
    return reply


def test_no_user_namespace_inside_and_numpy_scalars_cross_as_numbers(sandbox):
    run(sandbox, "import ctypes, numpy as np\n"
                 "libc = ctypes.CDLL(None, use_errno=True)\n"
                 "made = libc.unshare(0x10000000)  # CLONE_NEWUSER\n"
                 "n, x = np.int64(6), np.float32(0.5)")
    env = Namespace(lambda: sandbox)
    assert env.get("made") == -1
    n, x = env.get("n"), env.get("x")
    assert (n, type(n)) == (6, int) and (x, type(x)) == (0.5, float)


def test_a_sandbox_that_stops_reading_requests_cannot_block_the_grader(sandbox):
    # the notebook swaps its request pipe for one nobody writes to, keeping the real one open
    run(sandbox, "import os, sys\n"
                 "fd = int(sys.argv[1])\n"
                 "kept = os.dup(fd)\n"
                 "other, _writer = os.pipe()\n"
                 "os.dup2(other, fd)")
    big = torch.zeros(2**22)  # 16 MB: far more than a pipe holds
    outcome, value = _within(60, lambda: sandbox.request(
        {"op": "set", "name": "big", "value": big}, 3))
    assert outcome == "error" and isinstance(value, (SandboxError, TimeoutError)), (outcome, value)
    assert not sandbox.alive


def test_a_zero_stride_tensor_sent_back_is_refused_before_it_grows(sandbox):
    # a reply written by hand: 4 bytes of storage that claim to be 2**33 floats (32 GB)
    outcome, value = _within(60, lambda: sandbox.request({"op": "run", "source": (
        "import io, os, struct, sys, torch\n"
        "buffer = io.BytesIO()\n"
        "huge = torch.zeros(1).expand(2**33)\n"
        "reply = {'~': 'dict', 'k': ['reply', 'value'], 'v': [True, huge]}\n"
        "torch.save(reply, buffer)  # the wire format of grading.sandbox_child.encode\n"
        "data = buffer.getvalue()\n"
        "os.write(int(sys.argv[2]), struct.pack('!Q', len(data)) + data)\n"
        "import time; time.sleep(30)")}, 10))
    assert outcome == "error" and isinstance(value, SandboxError), (outcome, value)
    assert "malformed message (ValueError)" in str(value)


# Inside the sandbox: the modules loaded from the virtualenv whose .pyc is not on disk (each was
# compiled from its source in this process, as it will be in every sandbox).
COMPILED_HERE = """
import os, sys, sysconfig
_venv = sysconfig.get_paths()["purelib"]
compiled_here = sorted(name for name, module in list(sys.modules.items())
                       if (getattr(module, "__file__", None) or "").startswith(_venv)
                       and getattr(module, "__cached__", None)
                       and not os.path.exists(module.__cached__))
"""


def test_every_module_the_exercises_import_in_a_sandbox_was_compiled_by_the_install(sandbox):
    """The sandbox cannot write a .pyc (it sees the virtualenv read-only): a module it imports
    without one is compiled again in every sandbox. Every handout's code cells, run in one
    sandbox as a grading would (check cells and `skip-in-grading` cells left out; a stub may
    raise), import only modules that the install compiled (the Makefile's compileall: a package
    left out of it must be one no sandbox imports)."""
    import nbformat

    from grading.worker import graded_cells

    for notebook in sorted((Path(__file__).resolve().parents[1] / "exercises").glob("*/*.ipynb")):
        for _, source in graded_cells(nbformat.read(notebook, as_version=4)):
            sandbox.request({"op": "run", "source": source}, LIMITS.cell)
    run(sandbox, COMPILED_HERE)
    assert Namespace(lambda: sandbox).get("compiled_here") == []
