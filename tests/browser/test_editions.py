"""The English and the Chinese edition (issue 16): built side by side (_build/html/ and
_build/html/zh/), every page of one has its counterpart in the other, and the language
switch on every page goes to it. The other browser tests (console, math, images, axe,
equations, launch links, downloads) run over the pages of both editions."""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

import pytest

from book_site import SHOTS, SITE, site_pages, zh_pages_with_text, zh_search

pytestmark = pytest.mark.browser

PAGES = site_pages()
EN_PAGES = [p for p in PAGES if not p.startswith("zh/") and p != "index.html"]
ZH_PAGES = [p for p in PAGES if p.startswith("zh/") and p != "zh/index.html"]
# Pages that only one edition has; their switch goes to the other edition's start page.
ZH_ONLY = {"zh/errata.html"}


def test_both_editions_are_built():
    assert (SITE / "index.html").is_file() and (SITE / "zh" / "index.html").is_file(), (
        "build both editions: make book")


@pytest.mark.parametrize("page", EN_PAGES)
def test_every_english_page_has_a_chinese_counterpart(page):
    assert (SITE / "zh" / page).is_file(), f"{page} has no Chinese page zh/{page}"


@pytest.mark.parametrize("page", ZH_PAGES)
def test_every_chinese_page_has_an_english_counterpart_or_is_chinese_only(page):
    english = page.removeprefix("zh/")
    assert page in ZH_ONLY or (SITE / english).is_file(), f"{page} has no English page {english}"


def _resolve(page: str, href: str) -> str:
    path = urlsplit(href).path
    if path.startswith("/"):
        return path.lstrip("/")
    parts: list[str] = []
    for part in (PurePosixPath(page).parent / path).parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


@pytest.mark.parametrize("page", EN_PAGES + ZH_PAGES)
def test_language_switch_goes_to_the_same_page_in_the_other_language(visitor, page):
    visit = visitor.visit(page)
    assert len(visit.lang_switch) == 1, f"{page}: language switch links {visit.lang_switch}"
    target = _resolve(page, visit.lang_switch[0])
    if page in ZH_ONLY:
        expected = "intro.html"
    elif page.startswith("zh/"):
        expected = page.removeprefix("zh/")
    else:
        expected = "zh/" + page
    assert target == expected, f"{page}: the language switch goes to {target}, not {expected}"
    assert (SITE / target).is_file(), f"{page}: the language switch goes to a missing page {target}"


@pytest.mark.parametrize("page", EN_PAGES + ZH_PAGES)
def test_page_declares_its_language(visitor, page):
    visit = visitor.visit(page)
    want = "zh-CN" if page.startswith("zh/") else "en"
    assert visit.html_lang == want, f"{page}: <html lang={visit.html_lang!r}>, want {want!r}"


def test_chinese_search_finds_the_pages_about_attention(visitor, site_url):
    """Sphinx's Chinese search (jieba splits the text into words) finds 注意力 ("attention")
    on every Chinese page whose text uses the word, including the attention chapters once they
    are translated."""
    expected = zh_pages_with_text("注意力")
    assert expected, "no Chinese page mentions 注意力 at all"
    driver = visitor.driver
    driver.get_log("browser")
    found = zh_search(driver, site_url, "注意力")
    driver.save_screenshot(str(SHOTS / "zh__search--attention.png"))
    missing = [p for p in expected if p not in found]
    assert not missing, f"search for 注意力 did not find {missing}; it found {sorted(found)}"
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
