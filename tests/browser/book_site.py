"""Where the built book is, and which of its pages exist (shared by the browser tests)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

BOOK_ROOT = Path(os.environ.get("MHA_BOOK_ROOT", Path(__file__).resolve().parents[2]))
SITE = Path(os.environ.get("MHA_SITE_DIR", BOOK_ROOT / "_build" / "html"))
SHOTS = Path(os.environ.get("MHA_SCREENSHOT_DIR", SITE.parent / "screenshots"))

# Window widths at which every display equation must fit its column: a desktop browser and
# a phone (the width of an iPhone 12-15 in CSS pixels).
DESKTOP_WIDTH = 1280
PHONE_WIDTH = 390

# Folders of the built site that hold assets, not pages.
ASSET_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static", "_panels_static"}


def site_pages() -> list[str]:
    """Every HTML page of the built site, as a path relative to the site root."""
    if not SITE.is_dir():
        return []
    pages = []
    for path in sorted(SITE.rglob("*.html")):
        rel = path.relative_to(SITE)
        # At any depth: the Chinese edition (zh/) has its own _static/, _sources/, ...
        if ASSET_DIRS & set(rel.parts[:-1]):
            continue
        pages.append(rel.as_posix())
    return pages


def book_config() -> dict:
    return yaml.safe_load((BOOK_ROOT / "_config.yml").read_text(encoding="utf-8"))


def notebook_source(page: str) -> Path | None:
    """The .ipynb in the book's source tree that a page was built from, if any."""
    src = BOOK_ROOT / Path(page).with_suffix(".ipynb")
    return src if src.is_file() else None
