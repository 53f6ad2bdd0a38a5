"""Re-execute every notebook of both editions and store its outputs: `make record`.

The book shows the stored outputs, and `make notebooks` re-runs each notebook and compares
(nbval). So that the book is one consistent run, the outputs are recorded together, on one
machine, on purpose, by this command, never a chapter here and there:

    python tools/record_outputs.py [chapters] [exercises] [zh]   (default: all three)

1. chapters: the English chapters, executed in place (two at a time, the longest first);
2. exercises: regenerated from their masters and executed (`grading.assign`);
3. zh: the Chinese edition generated again, then the Chinese twins of what this run recorded
   (chapters with code translations, exercises) executed and stored (`zh/zh_edition.py`).
   Their training runs load the English runs from this run's cache.

The training runs are computed afresh, in a new run cache (not ~/.cache/mha-course), so that
no stored output comes from a run of older code or other kernels, and the execution times the
notebooks record are those of a fresh machine: `make notebooks` starts the longest first by
those times (conftest.py).

It prints the CPU kernels PyTorch used (`torch.backends.cpu.get_cpu_capability()`) and writes
them to `tools/recorded_kernels.json`, from which `make notebooks` chooses other kernels to
check the outputs under (conftest.py); say which in the README's "Stored outputs" line when
you commit the result. A notebook whose metadata asks for plain code (conftest.py's
`records_under_plain_kernels`: chapters that train) is executed, in both
editions, under plain kernels instead.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "zh"))

from conftest import KERNEL_VARIABLES, RECORDED_KERNELS, recorded_seconds, recording_kernels  # noqa: E402
import zh_edition  # noqa: E402

PYTHON = sys.executable
PARTS = ("chapters", "exercises", "zh")


def run(command: list[str], notebook: Path | None = None) -> str:
    """Run ``command``; one that executes ``notebook`` runs under the notebook's recording kernels."""
    kernels = recording_kernels(notebook) if notebook is not None else {}
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES} | kernels
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"failed: {' '.join(command)}\n{done.stdout}{done.stderr}")
    plain = " (plain kernels)" if kernels else ""
    return f"{time.monotonic() - start:6.0f} s  {command[-1]}{plain}"


def in_parallel(commands: list[tuple[list[str], Path | None]]) -> None:
    """Run the commands (each with the notebook it executes, if any) two at a time (the
    machine's cores), in order; stop at a failure."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        for line in pool.map(lambda job: run(*job), commands):
            print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parts", nargs="*", choices=PARTS, default=list(PARTS),
                        help="what to record (default: all three, in this order)")
    parser.add_argument("--cache", metavar="DIR",
                        help="reuse the run cache of an earlier `make record` (printed at its start) "
                             "instead of training afresh, e.g. to record zh again")
    args = parser.parse_args(argv)
    parts = args.parts
    os.environ["MHA_COURSE_CACHE"] = args.cache or tempfile.mkdtemp(prefix="mha-record-cache-")
    print(f"run cache: {os.environ['MHA_COURSE_CACHE']}", flush=True)
    capability = subprocess.run(
        [PYTHON, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        capture_output=True, text=True, check=True).stdout.strip()
    print(f"recording with PyTorch's {capability} CPU kernels", flush=True)
    commands = []
    if "chapters" in parts:
        chapters = sorted((ROOT / "chapters").glob("*.ipynb"), key=lambda p: -recorded_seconds(p))
        commands += [([PYTHON, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                       "--inplace", str(p.relative_to(ROOT))], p) for p in chapters]
    if "exercises" in parts:
        exercises = sorted(p.stem for p in (ROOT / "grading" / "masters").glob("ex*.ipynb"))
        commands += [([PYTHON, "-m", "grading.assign", name], None) for name in exercises]
    in_parallel(commands)
    if "zh" in parts:
        zh_edition.write_all()
        # the Chinese twins of what this run recorded (of everything, when it recorded only zh)
        english = set(parts) - {"zh"} or {"chapters", "exercises"}
        pages = ((zh_edition.executed_pages() if "chapters" in english else [])
                 + [p for p in zh_edition.notebook_pages()
                    if zh_edition.is_exercise(p) and "exercises" in english])
        # execute_zh_notebook itself, not `zh_edition.py --execute`, which first regenerates
        # every file: two at once would rewrite a notebook the other has just stored
        execute = ("import sys; sys.path.insert(0, 'zh'); import zh_edition; "
                   "zh_edition.execute_zh_notebook(sys.argv[1])")
        in_parallel([([PYTHON, "-c", execute, page], None) for page in pages])  # (its own kernels)
        zh_edition.write_all()
    RECORDED_KERNELS.write_text(json.dumps({"cpu_capability": capability}) + "\n", encoding="utf-8")
    print(f"recorded with PyTorch's {capability} CPU kernels (written to "
          f"{RECORDED_KERNELS.relative_to(ROOT)}: `make notebooks` checks under other ones)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
