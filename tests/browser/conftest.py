"""Fixtures for the real-browser tests of the built book.

The built site (``_build/html``, from ``make book``) is served by a local ``http.server`` on
127.0.0.1 and read by Debian's headless Chromium through chromedriver, with DNS switched off,
so any page that reaches for the network fails with a console error. Each page is visited
once; every test reads the facts gathered on that visit. A screenshot of each page is kept in
``_build/screenshots/``. `make browser` runs two pytest-xdist workers, each with its own
server and Chromium; ``--dist loadscope`` gives all the tests of one page to one worker
(pytest_xdist_make_scheduler below), so each page is still visited once.

Environment overrides: MHA_BOOK_ROOT (the book's source folder, default: this checkout),
MHA_SITE_DIR (default: $MHA_BOOK_ROOT/_build/html), MHA_SCREENSHOT_DIR
(default: $MHA_SITE_DIR/../screenshots), CHROMIUM and CHROMEDRIVER (default: found on PATH).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from book_site import DESKTOP_WIDTH, PHONE_WIDTH, SHOTS, SITE, book_config, site_pages

WINDOW_HEIGHT = 1000

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Network off: every host fails to resolve except 127.0.0.1, where the site is served.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    f"--window-size={DESKTOP_WIDTH},{WINDOW_HEIGHT}",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
]

# --------------------------------------------------------------------------------------
# Local web server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    failures: list[tuple[str, int]] = []

    def end_headers(self):
        # LinkChecker waits 0.1-0.6 s between requests to one host unless the server says
        # it is fine with more by sending this header (test_links.py uses this server).
        self.send_header("LinkChecker", "local test server")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by http.server
        pass

    def log_request(self, code="-", size="-"):
        try:
            status = int(code)
        except (TypeError, ValueError):
            status = 0
        if status >= 400:
            self.failures.append((self.path, status))


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").is_file():
        pytest.fail(f"No built book at {SITE}: run `make book` (or `make book-strict`) first.")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------------------
# Browser


def _find(env_var: str, *names: str) -> str:
    if os.environ.get(env_var):
        return os.environ[env_var]
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        f"{names[0]} not found. Install Debian's packages (as root, or with sudo): "
        "sudo apt-get update && sudo apt-get install -y chromium chromium-driver fonts-wqy-microhei "
        "(`make browser-deps` does this when run as root), or set CHROMIUM and CHROMEDRIVER."
    )


@pytest.fixture(scope="session")
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = _find("CHROMIUM", "chromium", "chromium-browser")
    chromedriver = _find("CHROMEDRIVER", "chromedriver")
    profile = tempfile.mkdtemp(prefix="mha-chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=chromedriver)
    browser = webdriver.Chrome(service=service, options=options)
    # Generous: axe on the longest page (chapter 10) took 24 s on 2 cores under a load of 9.
    browser.set_page_load_timeout(60)
    browser.set_script_timeout(120)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


# --------------------------------------------------------------------------------------
# One visit per page


@dataclass
class PageVisit:
    page: str
    url: str
    final_url: str
    title: str
    console: list[dict]
    math_elements: int
    mjx_containers: int
    untypeset_math: list[str]
    math_errors: list[str]
    images: list[dict]
    cells: list[dict]
    launch_links: dict[str, list[str]]
    download_links: list[str]
    footer: str
    article_links: list[str]
    favicon: str
    html_lang: str
    lang_switch: list[str]
    search_language: str
    # Display equations wider than their column, per window width: {width: [{tex, width, avail}]}
    overflowing_equations: dict[int, list[dict]] = field(default_factory=dict)
    display_equations: int = 0
    axe_violations: list[dict] = field(default_factory=list)
    # Shown text outside the article and reader-facing attributes: {visible: [...], attributes: [...]}
    chrome: dict = field(default_factory=dict)
    screenshots: list[Path] = field(default_factory=list)
    # (path, status) of each request the local server failed while this page was loading
    failed_requests: list[tuple[str, int]] = field(default_factory=list)

    @property
    def severe(self) -> list[str]:
        return [entry["message"] for entry in self.console if entry.get("level") == "SEVERE"]


# Gathered in the page after it has loaded, MathJax has typeset and images have loaded.
_FACTS_JS = r"""
const math = Array.from(document.querySelectorAll('.math'));
const untypeset = math.filter(el => !el.querySelector('mjx-container'))
                      .map(el => el.textContent.trim().slice(0, 80));
const imgs = Array.from(document.querySelectorAll('img')).map(img => ({
  src: img.getAttribute('src'), alt: img.getAttribute('alt'),
  complete: img.complete, naturalWidth: img.naturalWidth,
  inArticle: !!img.closest('article'),
}));
const cells = Array.from(document.querySelectorAll('div.cell')).map(cell => {
  const outs = Array.from(cell.querySelectorAll('.cell_output'));
  return {
    classes: cell.className,
    outputs: outs.length,
    outputText: outs.map(o => o.textContent).join('').trim().length,
    outputImages: outs.reduce((n, o) => n + o.querySelectorAll('img').length, 0),
    outputHeight: outs.reduce((h, o) => h + o.getBoundingClientRect().height, 0),
    hiddenOutput: outs.some(o => !!o.closest('details:not([open])')) || /hide-output|hide-cell/.test(cell.className),
  };
});
const hrefs = sel => Array.from(document.querySelectorAll(sel)).map(a => a.href);
// named as PageVisit's fields, which this object fills
return {
  title: document.title,
  final_url: location.href,
  math_elements: math.length,
  mjx_containers: document.querySelectorAll('mjx-container').length,
  untypeset_math: untypeset,
  math_errors: Array.from(document.querySelectorAll('mjx-merror')).map(e => e.textContent.slice(0, 80)),
  images: imgs,
  cells: cells,
  launch_links: {
    colab: hrefs('a[href*="colab.research.google.com"]'),
    binder: hrefs('a[href*="mybinder.org"]'),
  },
  download_links: hrefs('a[href$=".ipynb"]').filter(h => h.includes('/_sources/')),
  footer: Array.from(document.querySelectorAll('footer')).map(f => f.innerText).join('\n'),
  article_links: hrefs('article a[href]'),
  favicon: (document.querySelector('link[rel~="icon"]') || {}).href || '',
  html_lang: document.documentElement.lang,
  lang_switch: hrefs('a.lang-switch-link'),
  search_language: (window.DOCUMENTATION_OPTIONS || {}).LANGUAGE || '',
};
"""

# The text of the page's chrome (everything outside the article that is shown) and the
# attributes a reader meets (titles, labels, placeholders) anywhere: test_zh_interface.py
# looks for English theme strings in them on the Chinese pages.
_CHROME_JS = r"""
const article = document.querySelector('article');
const visible = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const node = walker.currentNode;
  const el = node.parentElement;
  if (!el || (article && article.contains(el)) || el.closest('script, style, noscript')) continue;
  if (!el.getClientRects().length) continue;  // not shown
  if (node.textContent.trim()) visible.push(node.textContent.trim());
}
const attributes = [];
for (const el of document.querySelectorAll('[title], [aria-label], [placeholder], [alt], [data-bs-title]')) {
  for (const name of ['title', 'aria-label', 'placeholder', 'alt', 'data-bs-title']) {
    const value = el.getAttribute(name);
    if (value) attributes.push(name + '=' + value);
  }
}
return {visible: visible, attributes: attributes};
"""

# Resolves once MathJax (if the page loads it) has typeset the page.
_MATHJAX_DONE_JS = r"""
const done = arguments[arguments.length - 1];
const start = Date.now();
(function wait() {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done('typeset'), e => done('error: ' + e));
  } else if (!document.querySelector('script[src*="mathjax"]') || Date.now() - start > 15000) {
    done(mj ? 'no-startup' : 'no-mathjax');
  } else {
    setTimeout(wait, 50);
  }
})();
"""

# Makes lazy images load now and resolves when every image has finished (loaded or failed).
_IMAGES_DONE_JS = r"""
const done = arguments[arguments.length - 1];
const imgs = Array.from(document.images);
imgs.forEach(img => { if (img.loading === 'lazy') img.loading = 'eager'; });
Promise.all(imgs.map(img => img.complete ? null :
  new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })))
  .then(() => done(true));
setTimeout(() => done(false), 15000);
"""


# Every display equation whose typeset width exceeds the width of its column (the page's
# own horizontal scroll, or a cut-off formula on a phone). TeX source from MathJax's list.
_EQUATIONS_JS = r"""
let tex = new Map();
try {
  for (const item of MathJax.startup.document.math) tex.set(item.typesetRoot, item.math);
} catch (e) {}
const all = Array.from(document.querySelectorAll('mjx-container[display="true"]'));
const over = all.map(c => {
  const math = c.querySelector('mjx-math') || c;
  return {tex: (tex.get(c) || c.textContent).trim().slice(0, 160),
          width: Math.ceil(math.getBoundingClientRect().width),
          avail: Math.floor(c.parentElement.clientWidth)};
}).filter(e => e.width > e.avail + 1);
return {count: all.length, over: over, viewport: window.innerWidth};
"""

AXE_JS_FILE = Path(__file__).with_name("vendor") / "axe.min.js"

# axe-core's WCAG 2 level A and AA rules (tags wcag2a, wcag2aa) over the whole page. (Its
# WCAG 2.1 tags add the experimental rule label-content-name-mismatch, which flags the
# theme's search and colour-mode buttons on every page: the theme's markup, not ours.)
#
# The rules that read colours (color-contrast, link-in-text-block: most of axe's time, 3-5 s on
# a chapter) run on every page but the Chinese twin of an English page (zh/chapters/...,
# zh/exercises/...): it has the English page's stylesheet, theme and elements, in the same
# colours; only its words differ, which the other rules still check.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
_AXE_RUN_JS = r"""
const skipped = arguments[0], done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']},
                   rules: Object.fromEntries(skipped.map(id => [id, {enabled: false}])),
                   resultTypes: ['violations']})
  .then(r => done(r.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
      nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' +
                                        (n.failureSummary || '').replace(/\s+/g, ' ').slice(0, 240))}))))
  .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), count: 1, nodes: []}]));
"""

# Resolves with the viewport's width once it is arguments[0] px (or after 5 s, whatever it is
# then), after the next frame has been laid out: a condition, not a fixed wait.
_RESIZED_JS = r"""
const want = arguments[0], done = arguments[arguments.length - 1];
const start = Date.now();
(function wait() {
  if (window.innerWidth === want || Date.now() - start > 5000) {
    requestAnimationFrame(() => requestAnimationFrame(() => done(window.innerWidth)));
  } else {
    setTimeout(wait, 20);
  }
})();
"""

# Scrolls the first figure of the article to the middle of the window and resolves after the
# next frame is drawn; false if the article has no figure.
_SCROLL_TO_FIGURE_JS = r"""
const done = arguments[arguments.length - 1];
const img = document.querySelector('article .cell_output img, article figure img');
if (!img) { done(false); } else {
  img.scrollIntoView({block: 'center'});
  requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
}
"""

# Resolves once every font the page asked for has loaded or failed (a failed font is a
# console error and a failed request, which the visit must see).
_FONTS_DONE_JS = r"""
const done = arguments[arguments.length - 1];
document.fonts.ready.then(() => done(true), () => done(false));
"""


def colour_rules_skipped(page: str) -> list[str]:
    """The axe rules left out on ``page``: COLOUR_RULES on the Chinese twin of an English page."""
    twin = page.removeprefix("zh/")
    if page.startswith("zh/") and twin.startswith(("chapters/", "exercises/")) and (SITE / twin).is_file():
        return COLOUR_RULES
    return []


def _shot_name(page: str, suffix: str = "") -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "__", page.removesuffix(".html"))
    return f"{stem}{suffix}.png"


class Visitor:
    def __init__(self, driver, base_url: str):
        self.driver = driver
        self.base_url = base_url
        self.cache: dict[str, PageVisit] = {}
        self.axe_source = AXE_JS_FILE.read_text(encoding="utf-8") if AXE_JS_FILE.is_file() else None
        SHOTS.mkdir(parents=True, exist_ok=True)

    def console(self) -> list[dict]:
        return self.driver.get_log("browser")

    def visit(self, page: str) -> PageVisit:
        if page in self.cache:
            return self.cache[page]
        drv = self.driver
        self.console()  # drop what earlier pages logged
        failures_before = len(_QuietHandler.failures)
        url = self.base_url + page
        drv.get(url)
        _wait_ready(drv)
        drv.execute_async_script(_MATHJAX_DONE_JS)
        drv.execute_async_script(_IMAGES_DONE_JS)
        facts = drv.execute_script(_FACTS_JS)
        visit = PageVisit(page=page, url=url, console=[], **facts)
        visit.chrome = drv.execute_script(_CHROME_JS)
        # Everything at the desktop width first (the window's size on every page load):
        # equations, axe, pictures; then the equations once more at a phone's width.
        eq = drv.execute_script(_EQUATIONS_JS)
        visit.display_equations = eq["count"]
        visit.overflowing_equations[DESKTOP_WIDTH] = eq["over"]
        if self.axe_source is not None:
            drv.execute_script(self.axe_source)
            visit.axe_violations = drv.execute_async_script(_AXE_RUN_JS, colour_rules_skipped(page))
        else:
            visit.axe_violations = [{"id": "axe-missing", "impact": "critical", "count": 1,
                                     "help": f"{AXE_JS_FILE} is missing", "nodes": []}]
        self._screenshots(visit)
        visit.overflowing_equations[PHONE_WIDTH] = self._phone_equations() if eq["count"] else []
        # Read last, so that late messages (a font or script that failed after the load
        # event) and anything the page logged while resized are counted, with no fixed wait.
        drv.execute_async_script(_FONTS_DONE_JS)
        visit.console = self.console()
        visit.failed_requests = _QuietHandler.failures[failures_before:]
        self.cache[page] = visit
        return visit

    def _screenshots(self, visit: PageVisit) -> None:
        drv = self.driver
        shot = SHOTS / _shot_name(visit.page)
        drv.save_screenshot(str(shot))
        visit.screenshots.append(shot)
        # A second picture centred on the first figure of the article, if there is one.
        if drv.execute_async_script(_SCROLL_TO_FIGURE_JS):
            shot = SHOTS / _shot_name(visit.page, "--figure")
            drv.save_screenshot(str(shot))
            visit.screenshots.append(shot)

    def _phone_equations(self) -> list[dict]:
        """The display equations too wide for their column at a phone's width; the window
        gets its desktop width back before the next page loads."""
        drv = self.driver
        try:
            drv.set_window_size(PHONE_WIDTH, WINDOW_HEIGHT)
            viewport = drv.execute_async_script(_RESIZED_JS, PHONE_WIDTH)
            if viewport != PHONE_WIDTH:  # the browser refused the size: say so
                return [{"tex": f"(window {viewport} px wide, not {PHONE_WIDTH})", "width": 0, "avail": 0}]
            return drv.execute_script(_EQUATIONS_JS)["over"]
        finally:
            drv.set_window_size(DESKTOP_WIDTH, WINDOW_HEIGHT)
            drv.execute_async_script(_RESIZED_JS, DESKTOP_WIDTH)


def _wait_ready(drv, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if drv.execute_script("return document.readyState") == "complete":
            return
        time.sleep(0.05)
    raise TimeoutError(f"{drv.current_url} did not finish loading in {timeout} s")


def pytest_configure(config):
    # Pictures of pages that may no longer exist go, once per run: in the controller, not
    # in each pytest-xdist worker (a worker's clean-up would delete the other's pictures).
    if not hasattr(config, "workerinput"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        for old in SHOTS.glob("*.png"):
            old.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------
# pytest-xdist (`make browser` runs with -n 2): each worker has its own server and Chromium,
# and all the tests of one page go to the same worker, so that the page is visited once.


def page_of(nodeid: str, pages: list[str]) -> str | None:
    """The page a test is parametrized with (the longest page named whole among its
    parameters, which pytest joins with "-"), or None."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return None
    params = nodeid[nodeid.index("[") + 1:-1]
    named = [p for p in pages
             if params == p or params.startswith(p + "-") or params.endswith("-" + p) or f"-{p}-" in params]
    return max(named, key=len, default=None)


def pytest_collection_modifyitems(config, items):
    # The tests of no page first (the link check is the longest single test): with
    # --no-loadscope-reorder a worker starts on them while the other starts on the pages,
    # instead of one worker finishing the run alone with the link check.
    pages = site_pages()
    here = Path(__file__).parent
    items.sort(key=lambda item: item.path.parent == here and page_of(item.nodeid, pages) is not None)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    pages = site_pages()

    class PageScheduling(LoadScopeScheduling):
        """--dist loadscope where the scope of a test is its page (its tests in every
        file are one unit of work), and each test of no page is a unit of its own."""

        def _split_scope(self, nodeid: str) -> str:
            page = page_of(nodeid, pages)
            return f"page {page}" if page else nodeid

    return PageScheduling(config, log)


@pytest.fixture(scope="session")
def visitor(driver, site_url):
    return Visitor(driver, site_url)


@pytest.fixture(scope="session")
def config():
    return book_config()


def pytest_report_header(config):
    return [f"book site: {SITE}", f"screenshots: {SHOTS}"]

