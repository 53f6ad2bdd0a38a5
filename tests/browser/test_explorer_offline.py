"""The attention explorer (mha.course.explorer) in a real browser, offline.

Two kinds of page. Chapter 15's built page is opened from file:// (no server, DNS off: see
conftest.CHROMIUM_FLAGS), as a reader who downloaded the built book would open it, in both
editions: the script is inlined in the page, so choosing another head must change the view,
and the keyboard must move the query. A standalone page written here from
``show_attention`` (no book build needed) checks the rest: the matrix view of all heads, the
legend and the marked spans, hover that does not stick, the top-3 line, the Chinese
interface, and axe-core's WCAG 2 A/AA rules on the explorer. (axe-core and console errors
are also checked on every page of the book by test_site.py.)
"""

from __future__ import annotations

import re

import pytest
import torch

from book_site import SITE
from conftest import AXE_JS_FILE, _AXE_RUN_JS

pytestmark = pytest.mark.browser

PAGES = ["chapters/15_looking_inside.html", "zh/chapters/15_looking_inside.html"]

_STATE_JS = r"""
const root = document.querySelectorAll('div.mha-explorer')[arguments[0] || 0];
if (!root) return null;
return {
  ready: root.getAttribute('data-ready'),
  view: root.getAttribute('data-view'),
  info: root.querySelector('.mha-info').textContent,
  legend: root.querySelector('.mha-legend').textContent,
  colours: Array.from(root.querySelectorAll('.mha-token')).map(b => b.style.backgroundColor),
  heads: root.querySelector('select.mha-head').options.length,
  thumbs: root.querySelectorAll('.mha-thumb').length,
  labels: Array.from(root.querySelectorAll('label, .mha-grid-row > span')).map(x => x.textContent),
  active: document.activeElement ? document.activeElement.getAttribute('data-index') : null,
};
"""


def _open(driver, page):
    path = SITE / page
    if not path.is_file():
        pytest.skip(f"{page} is not built (the Chinese edition is built by `make book`)")
    driver.get(path.as_uri())
    state = driver.execute_script(_STATE_JS)
    assert state is not None, f"{page}: no attention explorer on the page"
    assert state["ready"] == "1", f"{page}: the explorer's script did not run"
    return state


@pytest.mark.parametrize("page", PAGES)
def test_choosing_another_head_changes_the_view(driver, page):
    from selenium.webdriver.support.ui import Select

    before = _open(driver, page)
    assert before["heads"] >= 2 and len(before["colours"]) > 2
    head = Select(driver.find_element("css selector", "div.mha-explorer select.mha-head"))
    head.select_by_index(1)
    after = driver.execute_script(_STATE_JS)
    assert after["view"] != before["view"]
    assert after["colours"] != before["colours"], "the tokens' shading did not change"
    assert after["info"] != before["info"]


@pytest.mark.parametrize("page", PAGES)
def test_the_keyboard_moves_the_query(driver, page):
    from selenium.webdriver.common.keys import Keys

    before = _open(driver, page)
    query = int(before["view"].split(",")[2])
    token = driver.find_element("css selector", f"div.mha-explorer .mha-token[data-index='{query}']")
    assert token.get_attribute("tabindex") == "0", "the query's token is the one Tab reaches"
    token.send_keys(Keys.ARROW_LEFT)
    after = driver.execute_script(_STATE_JS)
    assert int(after["view"].split(",")[2]) == query - 1
    assert after["active"] == str(query - 1), "focus follows the query"
    assert after["colours"] != before["colours"]


def test_the_chinese_page_shows_the_interface_in_chinese(driver):
    state = _open(driver, PAGES[1])
    text = " ".join(state["labels"]) + state["info"] + state["legend"]
    assert not re.search(r"\b(Layer|Head|attends most to|attention weight)\b", text), text
    assert "层" in text and "头" in text and "最关注" in state["info"]


# ------------------------------------------------------------- a standalone page, no book

def _standalone(tmp_path, language="en"):
    from mha.course.explorer import show_attention

    T = 12
    scores = torch.randn(2, 3, T, T, generator=torch.Generator().manual_seed(0))
    causal = torch.ones(T, T).tril().bool()
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    views = [show_attention(weights, [f"t{i}" for i in range(T)], query=T - 1,
                            spans=[(1, 4, "segment"), (6, 9, "copy")], language=language,
                            title="Test view")._repr_html_(),
             show_attention(weights[0, 0], list("abcdefghijkl"), query=1,
                            language=language)._repr_html_()]
    lang = "zh-CN" if language == "zh" else "en"
    page = tmp_path / f"explorer-{language}.html"
    page.write_text(f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
                    f'<title>explorer</title></head><body><main>{"".join(views)}</main></body></html>',
                    encoding="utf-8")
    return page.as_uri()


def test_all_heads_are_shown_as_thumbnails_and_a_click_enlarges_one(driver, tmp_path):
    driver.get(_standalone(tmp_path))
    state = driver.execute_script(_STATE_JS)
    assert state["ready"] == "1" and state["thumbs"] == 2 * 3
    thumb = driver.find_element("css selector", "div.mha-explorer .mha-thumb[data-layer='1'][data-head='2']")
    thumb.click()
    after = driver.execute_script(_STATE_JS)
    assert after["view"].split(",")[:2] == ["1", "2"]
    assert thumb.get_attribute("aria-pressed") == "true"
    pixels = driver.execute_script(
        "const c = document.querySelector('div.mha-explorer canvas.mha-big');"
        "return Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data)"
        ".filter((v, i) => i % 4 == 0 && v < 250).length;")
    assert pixels > 100, "the enlarged pattern is drawn"


def test_the_legend_names_the_weight_scale_and_the_marked_spans(driver, tmp_path):
    driver.get(_standalone(tmp_path))
    state = driver.execute_script(_STATE_JS)
    assert "attention weight" in state["legend"]
    assert "segment (1\u20134)" in state["legend"] and "copy (6\u20139)" in state["legend"]
    borders = driver.execute_script(
        "return Array.from(document.querySelectorAll('div.mha-explorer .mha-token'))"
        ".map(b => b.style.borderBottomColor);")
    assert borders[2] != borders[0] and borders[7] != borders[2] and borders[5] == borders[0]


def test_hovering_previews_a_query_and_leaving_returns_to_the_chosen_one(driver, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains

    driver.get(_standalone(tmp_path))
    tokens = driver.find_elements("css selector", "div.mha-explorer .mha-token")
    ActionChains(driver).move_to_element(tokens[3]).perform()
    assert driver.execute_script(_STATE_JS)["view"].endswith(",3")
    ActionChains(driver).move_to_element(driver.find_element("css selector", ".mha-title")).perform()
    assert driver.execute_script(_STATE_JS)["view"].endswith(",11"), "hover must not stick"


def test_the_top_three_line_lists_only_keys_the_query_may_see(driver, tmp_path):
    driver.get(_standalone(tmp_path))
    info = driver.execute_script(_STATE_JS, 1)["info"]  # the second view: query 1 of a causal head
    positions = [int(p) for p in re.findall(r"\((\d+)\) \d\.\d\d", info)]
    assert sorted(positions) == [0, 1], info


def test_the_chinese_interface(driver, tmp_path):
    driver.get(_standalone(tmp_path, "zh"))
    state = driver.execute_script(_STATE_JS)
    assert "最关注" in state["info"] and "注意力权重" in state["legend"]
    assert any("层" in x for x in state["labels"]) and not any("Layer" in x for x in state["labels"])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_explorer_passes_axe_wcag_a_and_aa(driver, tmp_path, language):
    driver.get(_standalone(tmp_path, language))
    driver.execute_script(AXE_JS_FILE.read_text(encoding="utf-8"))
    violations = driver.execute_async_script(_AXE_RUN_JS, [])  # every rule
    assert violations == [], [(v["id"], v["nodes"]) for v in violations]
