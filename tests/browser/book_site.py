"""Where the built book is, and which of its pages exist (shared by the browser tests)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path, PurePosixPath
from urllib.parse import quote, urlsplit

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


def zh_pages_with_text(text: str) -> list[str]:
    """Chinese pages whose Markdown holds `text` (what a search for it should find)."""
    found = []
    for page in site_pages():
        if not page.startswith("zh/"):
            continue
        source = BOOK_ROOT / PurePosixPath(page).with_suffix(".ipynb")
        if not source.is_file():
            source = source.with_suffix(".md")
        if not source.is_file():
            continue
        if source.suffix == ".ipynb":
            nb = json.loads(source.read_text(encoding="utf-8"))
            body = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        else:
            body = source.read_text(encoding="utf-8")
        if text in body:
            found.append(page)
    return found


def zh_search_ranked(driver, site_url: str, query: str) -> list[str]:
    """The pages the Chinese edition's search page lists for `query`, best first, each once
    (a page can be listed more than once: as a whole and by its sections). Waits until the
    search has finished (its summary is written last), up to 30 s."""
    driver.get(site_url + "zh/search.html?q=" + quote(query))
    end = time.monotonic() + 30
    links: list[str] = []
    while time.monotonic() < end:
        state = driver.execute_script(
            "const s = document.querySelector('#search-results .search-summary, #search-results p');"
            "return {summary: s ? s.textContent : '', links: Array.from("
            "document.querySelectorAll('#search-results ul.search li a')).map(a => a.href)};")
        links = state["links"]
        if state["summary"] and links:
            break
        time.sleep(0.2)
    pages = [urlsplit(href).path.lstrip("/") for href in links]
    return list(dict.fromkeys(pages))


def zh_search(driver, site_url: str, query: str) -> set[str]:
    """The pages the Chinese edition's search page lists for `query` (waits up to 30 s)."""
    return set(zh_search_ranked(driver, site_url, query))
