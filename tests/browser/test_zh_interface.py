"""The Chinese edition reads as Chinese (issue 23): its glossary, its interface, its search.

* The glossary defines every term in Chinese: Han characters are at least 60% of the letters
  of the page's article (math left out: its letters are symbols, not English).
* No string of the theme is left in English on any Chinese page (THEME_STRINGS: what the
  themes write in the page's chrome, in attributes such as titles and placeholders, and the
  heading links inside the article); they come from locales/zh_CN/ (_ext/zh_interface.py).
  Nor a prompt of myst-nb's hidden cells ("Show code cell source") or of sphinx-togglebutton
  (issue 32), inside the article too.
* Search finds compounds: the index is segmented by jieba at build time, and the query is
  segmented in the browser against the index's own words (_ext/zh_static/zh_search.js), so
  因果掩码, 自注意力, 束搜索, 多头注意力 and 层归一化 each find the pages that use them.
Run with the network off, like every browser test (conftest.py).
"""

from __future__ import annotations

import re
import time

import pytest

from book_site import SHOTS, SITE, site_pages, zh_pages_with_text, zh_search

pytestmark = pytest.mark.browser

ZH_PAGES = [p for p in site_pages() if p.startswith("zh/")]

# English strings of Sphinx, pydata-sphinx-theme and sphinx-book-theme that a page of the
# English edition shows (visible text outside the article, or an attribute anywhere).
THEME_STRINGS = [
    "Search this book", "Search the docs", "Launch on", "Launch interactive content", "Binder logo",
    "Colab logo", "Toggle primary sidebar", "Toggle secondary sidebar", "Color mode", "System Settings",
    "Light", "Dark", "Link to this heading", "Link to this definition", "Copyright", "Skip to main content",
    "Back to top", "Print to PDF", "Download source file", "Download this page", "Download notebook file",
    "Fullscreen mode", "Repository", "Source repositories", "Open issue", "On this page", "Contents",
    "Home", "Site navigation", "Section Navigation", "Main", "Page", "previous page", "next page",
    "By The MHA Course authors", "MIT licence",
    # issue 32: the glossary's term links; myst-nb's hidden cells (aria-label)
    "Link to this term", "Toggle hidden content",
]


def _english_left(texts: list[str]) -> list[str]:
    found = []
    for text in texts:
        for english in THEME_STRINGS:
            if re.search(r"(?<![\w-])" + re.escape(english) + r"(?![\w-])", text):
                found.append(f"{english!r} in {text[:80]!r}")
    return found


def test_the_theme_strings_are_checked_on_chinese_pages():
    assert len(ZH_PAGES) > 30, f"only {len(ZH_PAGES)} Chinese pages built: run `make book`"


@pytest.mark.parametrize("page", ZH_PAGES)
def test_no_english_theme_string_on_a_chinese_page(visitor, page):
    chrome = visitor.visit(page).chrome  # conftest._CHROME_JS, on the page's one visit
    left = _english_left(chrome["visible"]) + _english_left(chrome["attributes"])
    assert not left, f"{page}: theme strings still in English:\n" + "\n".join(sorted(set(left)))


def _notebook_interface_strings() -> list[str]:
    """What myst-nb writes on a hidden cell (tags hide-input, hide-output, hide-cell), from its own
    defaults, and sphinx-togglebutton's hints (written into every page's head)."""
    from myst_nb.core.config import NbParserConfig

    config = NbParserConfig()
    prompts = [prompt.replace("{type}", kind) for prompt in (config.code_prompt_show, config.code_prompt_hide)
               for kind in ("source", "output", "outputs", "content")]
    return prompts + ["Toggle hidden content", "Click to show", "Click to hide"]


NOTEBOOK_STRINGS = _notebook_interface_strings()


@pytest.mark.parametrize("page", ZH_PAGES)
def test_no_english_notebook_prompt_on_a_chinese_page(page):
    """Issue 32: "Show code cell source" / "Hide code cell source" (inside the article, so not
    in the chrome that the test above reads) were English on 6 Chinese pages. Read from the
    written page: the "hide" prompt is not shown until the cell is opened."""
    html = (SITE / page).read_text(encoding="utf-8")
    left = [english for english in NOTEBOOK_STRINGS if english in html]
    assert not left, f"{page}: notebook interface strings still in English: {left}"


_HAN_SHARE_JS = r"""
const article = document.querySelector('article').cloneNode(true);
article.querySelectorAll('mjx-container, .math, script, style').forEach(e => e.remove());
const text = article.textContent;
const letters = (text.match(/\p{Letter}/gu) || []).length;
const han = (text.match(/\p{Script=Han}/gu) || []).length;
return {letters: letters, han: han};
"""


def test_chinese_glossary_is_mostly_chinese(visitor, site_url):
    driver = visitor.driver
    driver.get(site_url + "zh/glossary.html")
    for _ in range(100):
        if driver.execute_script("return document.readyState") == "complete":
            break
        time.sleep(0.05)
    counts = driver.execute_script(_HAN_SHARE_JS)
    share = counts["han"] / max(1, counts["letters"])
    print(f"zh/glossary.html: {counts['han']} Han of {counts['letters']} letters = {share:.1%}")
    assert share >= 0.60, f"zh/glossary.html: Han characters are {share:.1%} of the letters ({counts}), want >= 60%"


# Each compound, and the page that is about it (it must be found, with every other page whose
# text uses the compound).
COMPOUNDS = {
    "因果掩码": "zh/chapters/03_masking.html",
    "自注意力": "zh/chapters/01_self_attention.html",
    "束搜索": "zh/chapters/12_generation.html",
    "多头注意力": "zh/chapters/02_multi_head.html",
    "层归一化": "zh/chapters/06_layernorm_vs_batchnorm.html",
}


@pytest.mark.parametrize("query", list(COMPOUNDS))
def test_search_finds_a_compound_typed_as_one_word(visitor, site_url, query):
    driver = visitor.driver
    driver.get_log("browser")
    found = zh_search(driver, site_url, query)
    driver.save_screenshot(str(SHOTS / f"zh__search--{query}.png"))
    segmented = driver.execute_script("return window.zhSplitQuery ? window.zhSplitQuery(arguments[0]) : null;", query)
    print(f"{query}: segmented as {segmented}, {len(found)} pages found")
    expected = sorted(set(zh_pages_with_text(query)) | {COMPOUNDS[query]})
    missing = [p for p in expected if p not in found]
    assert not missing, (f"search for {query} (segmented as {segmented}) did not find {missing}; "
                         f"it found {sorted(found)}")
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
