"""The attention explorer (mha.course.explorer) in the built book, in a real browser, offline.

Chapter 15's page is opened from file:// (no server, DNS off: see conftest.CHROMIUM_FLAGS),
as a reader who downloaded the built book would open it. The explorer's script is inlined in
the page, so choosing another head must change the view, and the keyboard must move the query.
Both editions are checked. (axe-core and console errors are checked on every page, this one
included, by test_site.py.)
"""

from __future__ import annotations

import pytest

from book_site import SITE

pytestmark = pytest.mark.browser

PAGES = ["chapters/15_looking_inside.html", "zh/chapters/15_looking_inside.html"]

_STATE_JS = r"""
const root = document.querySelector('div.mha-explorer');
if (!root) return null;
return {
  ready: root.getAttribute('data-ready'),
  view: root.getAttribute('data-view'),
  info: root.querySelector('.mha-info').textContent,
  colours: Array.from(root.querySelectorAll('.mha-token')).map(b => b.style.backgroundColor),
  heads: root.querySelector('select.mha-head').options.length,
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
    assert "head 1" in after["info"] and "head 0" in before["info"]


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
