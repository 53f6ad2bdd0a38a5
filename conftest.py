"""The order in which `make notebooks` (nbval, two xdist workers, ``--dist loadscope``) runs
the notebooks. Each notebook stays one unit of work on one worker, its cells in order; the
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
"""
from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from pathlib import Path


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


def notebook_order(path: Path, root: Path) -> tuple[bool, float]:
    """Sort key of a notebook: English first, then the longest first."""
    relative = path.resolve().relative_to(root).as_posix()
    chinese = relative.startswith("zh/")
    return chinese, -recorded_seconds(root / relative.removeprefix("zh/"))


def pytest_collection_modifyitems(config, items):
    """Order a run of notebooks alone (nbval); leave any other run as collected."""
    if not items or any(item.path.suffix != ".ipynb" for item in items):
        return
    root = Path(config.rootpath).resolve()
    items.sort(key=lambda item: notebook_order(item.path, root))  # stable: cells keep their order
