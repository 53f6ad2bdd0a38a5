"""Byte-compile the packages a grading sandbox imports (``make`` runs this after installing).

    python -m grading.precompile

The sandbox sees the virtualenv read-only (``grading.sandbox``): a module without its ``.pyc``
there is compiled again in every sandbox that imports it (a ``make test`` whose install left
the compiling to imports took four minutes longer). Byte-compiling the whole virtualenv did
that work for 220 MB of Python of which a sandbox imports from about a third (torch, numpy,
matplotlib, IPython and what they import; not sympy, pandas, Sphinx, Selenium or
transformers). Every other module compiles once, on its first import, in a process that can
write: a test, a notebook's kernel, the book's build.

The packages are found, not listed: this process imports what the sandbox's child imports
before the first cell (``grading.sandbox_child.main``), every module of ``mha`` and what the
exercises' handouts import, and compiles whole each top-level package of the virtualenv that a
loaded module came from (so a module that the sandbox imports later, lazily, is compiled too).
"""
from __future__ import annotations

import ast
import compileall
import contextlib
import importlib
import io
import json
import pkgutil
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HANDOUTS = sorted((ROOT / "exercises").glob("*/*.ipynb"))


def handout_imports(notebooks=HANDOUTS) -> set[str]:
    """The modules the code cells of ``notebooks`` import (``import a.b``, ``from a.b import c``)."""
    names = set()
    for notebook in notebooks:
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            # IPython's magics and shell escapes are not Python: leave those lines out
            lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names |= {alias.name for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module)
    return names


def import_as_a_sandbox_does() -> None:
    """Import what a sandbox imports: torch and IPython's shell before the first cell, every
    module of mha (the graded code runs the grader's copy of it: a check may reach any part),
    then the handouts' imports, `%matplotlib inline` and a traceback, run by that shell."""
    import torch  # noqa: F401

    import mha
    from grading.sandbox_child import make_shell

    for module in pkgutil.walk_packages(mha.__path__, "mha."):
        importlib.import_module(module.name)

    shell = make_shell()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for name in sorted(handout_imports()):
            shell.run_cell(f"import {name}")
        shell.run_cell("%matplotlib inline")
        shell.run_cell("raise ValueError('a traceback: IPython imports its formatter')")


def installed_packages_in_use(site_packages: Path) -> list[Path]:
    """The top-level packages (folders) and modules (files) of ``site_packages`` from which a
    module is loaded in this process."""
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        try:
            top = Path(file).resolve().relative_to(site_packages.resolve()).parts[0]
        except ValueError:  # the standard library, the repository's own mha
            continue
        found.add(site_packages / top)
    return sorted(found)


def main() -> int:
    site_packages = Path(sysconfig.get_paths()["purelib"])
    import_as_a_sandbox_does()
    # A file that does not compile under this Python (torch ships one for Python 3.12 only) is
    # left out, as pip does, so the verdicts of compile_dir and compile_file are not ours to keep.
    for path in installed_packages_in_use(site_packages):
        if path.is_dir():
            compileall.compile_dir(path, quiet=2, workers=0)
        elif path.suffix == ".py":
            compileall.compile_file(path, quiet=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
