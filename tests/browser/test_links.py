"""No broken internal link or anchor in the built book, checked offline.

Two checks over the site served by conftest.py (needs the built book, `make book`):

* LinkChecker (https://linkchecker.github.io/linkchecker/) crawls from every page (so a page
  missing from the navigation is checked too) and fails on any page, image, script,
  stylesheet or download that does not exist. External links are not followed.
* Every `#fragment` of an internal link must name an id in its target page. This is done
  here with html.parser, each page parsed once, instead of LinkChecker's AnchorCheck plugin,
  which re-parses the target page for every distinct page#anchor URL and took minutes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest

from book_site import SITE, site_pages

pytestmark = pytest.mark.browser

RC = Path(__file__).with_name("linkcheckerrc")


def _linkchecker() -> str:
    beside_python = Path(sys.executable).with_name("linkchecker")
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which("linkchecker")
    if not found:
        pytest.fail("linkchecker is not installed: pip install linkchecker==10.6.0")
    return found


def test_no_broken_internal_links(site_url):
    pages = site_pages()
    assert pages, "no built book: run `make book` first"
    cmd = [_linkchecker(), "--config", str(RC), "--no-status", "--recursion-level=-1"]
    cmd += [site_url + page for page in pages]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    report = result.stdout.strip()
    summary = [line for line in report.splitlines() if " checked." in line]
    print("\n".join(summary))
    assert result.returncode == 0, (
        f"LinkChecker found broken links (exit {result.returncode}):\n"
        f"{report[-12000:]}\n{result.stderr[-2000:]}"
    )
    assert summary and " 0 errors found" in summary[-1], report[-2000:]


class _Anchors(HTMLParser):
    """Collects the ids a page defines and the hrefs it links to."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, int]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag in {"a", "area"} and attrs.get("href"):
            self.links.append((attrs["href"], self.getpos()[0]))


def _parse(page: str) -> _Anchors:
    parser = _Anchors()
    parser.feed((SITE / page).read_text(encoding="utf-8"))
    return parser


def test_every_anchor_exists():
    pages = site_pages()
    assert pages, "no built book: run `make book` first"
    parsed = {page: _parse(page) for page in pages}
    broken, checked = [], 0
    for page, info in parsed.items():
        for href, line in info.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not parts.fragment:
                continue  # external, or no anchor
            fragment = unquote(parts.fragment)
            if parts.path:
                target = PurePosixPath(page).parent / parts.path
                target = PurePosixPath(*_normalise(target.parts))
            else:
                target = PurePosixPath(page)
            if target.suffix != ".html":
                continue  # e.g. a download; LinkChecker checks it exists
            checked += 1
            key = target.as_posix()
            if key not in parsed:
                if not (SITE / key).is_file():
                    broken.append(f"{page}:{line}: {href} -> no page {key}")
                continue
            if fragment not in parsed[key].ids:
                broken.append(f"{page}:{line}: {href} -> no id {fragment!r} in {key}")
    print(f"{checked} links with anchors checked in {len(pages)} pages")
    assert checked, "no anchored link found at all: is the site built?"
    assert not broken, "broken anchors:\n" + "\n".join(broken)


def _normalise(parts: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
        elif part not in {".", ""}:
            out.append(part)
    return out
