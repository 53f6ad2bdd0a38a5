"""The files of ``mha`` that are not Python (the explorer's script, exercise 16's weights) reach a
pip install, as on Colab, only if ``pyproject.toml`` lists them as package data."""
import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_data_file_of_the_package_is_listed_as_package_data():
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    missing = []
    for path in sorted((ROOT / "mha").rglob("*")):
        if not path.is_file() or path.suffix in {".py", ".pyc"} or "__pycache__" in path.parts:
            continue
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in listed.get(package, [])):
            missing.append(f"{path.relative_to(ROOT)} (package {package})")
    assert not missing, "not in pyproject.toml's [tool.setuptools.package-data]: " + ", ".join(missing)
