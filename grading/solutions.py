"""Give an instructor the solution notebooks, outside the book.

    python -m grading.solutions                  # into _build/solutions/
    python -m grading.solutions --out somewhere/

For every exercise this writes ``<out>/<exercise>/<exercise>-solution.ipynb`` (the master with
its solutions in, as ``python -m grading.assign`` generated it) and ``<out>/<exercise>/tests/``
(the public *and* hidden tests), so that every check cell of a solution notebook runs and
passes when it is opened there. Nothing is written into ``exercises/`` or the book's pages.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = ROOT / "grading" / "autograder"


def write_solutions(out: Path) -> list[Path]:
    """Copy each exercise's solution notebook and tests into ``out``; return the notebooks."""
    written = []
    for source in sorted(p for p in AUTOGRADER.iterdir() if (p / "manifest.json").exists()):
        target = out / source.name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        notebook = source / f"{source.name}-solution.ipynb"
        shutil.copy(notebook, target / notebook.name)
        shutil.copytree(source / "tests", target / "tests",
                        ignore=shutil.ignore_patterns("__pycache__"))
        written.append(target / notebook.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "solutions",
                        help="folder to write into (default: _build/solutions)")
    args = parser.parse_args(argv)
    for path in write_solutions(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
