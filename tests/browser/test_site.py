"""The built book, as a reader's browser shows it (headless Chromium, network off).

Run after the book is built: `make browser` (part of `make test`). Every page of
_build/html is visited once; the screenshots land in _build/screenshots/.
"""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from book_site import (BOOK_ROOT, DESKTOP_WIDTH, PHONE_WIDTH, SHOTS, SITE, book_config,
                       notebook_source, site_pages)

# The first line of the Colab setup cell, which _ext/hide_setup_cell.py leaves out of pages
# (the Chinese exercises' setup cell has its comments in Chinese).
SETUP_HEADER = ("# Setup: on Google Colab", "# 准备：在 Google Colab")

pytestmark = pytest.mark.browser

PAGES = site_pages()
NOTEBOOK_PAGES = [p for p in PAGES if notebook_source(p)]
# index.html only redirects to the root page; search.html is tested with a query below.
CONTENT_PAGES = [p for p in PAGES if p not in {"index.html"}]

# Output types myst-nb renders (with nb_merge_streams); anything else it drops silently.
RENDERED_MIME = {
    "text/plain", "text/html", "text/markdown", "text/latex",
    "image/png", "image/jpeg", "image/svg+xml", "image/gif",
}
HIDDEN_CELL_TAGS = {"remove-cell", "remove_cell"}
HIDDEN_OUTPUT_TAGS = {"remove-output", "remove_output"}


def test_book_is_built():
    assert (SITE / "index.html").is_file(), f"no built book in {SITE}: run `make book` first"
    assert len(PAGES) >= 4, PAGES


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_page_has_no_console_errors(visitor, page):
    visit = visitor.visit(page)
    assert not visit.severe, f"{page}: console errors:\n" + "\n".join(visit.severe)


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_math_is_typeset(visitor, page):
    visit = visitor.visit(page)
    if visit.math_elements == 0:
        return  # no math on this page
    assert visit.mjx_containers >= visit.math_elements, (
        f"{page}: {visit.math_elements} math elements, {visit.mjx_containers} typeset by MathJax"
    )
    assert not visit.untypeset_math, f"{page}: math left as TeX source: {visit.untypeset_math}"
    assert not visit.math_errors, f"{page}: MathJax errors: {visit.math_errors}"


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_images_load_and_have_alt_text(visitor, page):
    visit = visitor.visit(page)
    broken = [img["src"] for img in visit.images if not img["naturalWidth"]]
    assert not broken, f"{page}: images that did not load: {broken}"
    no_alt = [img["src"] for img in visit.images if not (img["alt"] or "").strip()]
    assert not no_alt, (
        f"{page}: images without alt text: {no_alt} (give figure cells the metadata "
        '{"mystnb": {"image": {"alt": "..."}}})'
    )


def _expected_cells(notebook: Path) -> list[dict]:
    """The code cells myst-nb puts on the page, and whether each shows an output."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & HIDDEN_CELL_TAGS or "".join(cell["source"]).startswith(SETUP_HEADER):
            continue
        shows = not (tags & HIDDEN_OUTPUT_TAGS) and any(
            out["output_type"] in {"stream", "error"}
            or set(out.get("data", {})) & RENDERED_MIME
            for out in cell.get("outputs", [])
        )
        cells.append({"source": "".join(cell["source"])[:60], "has_output": shows})
    return cells


def _built_from(page: str) -> Path:
    """The copy of the notebook the page was built from (the site's download), so that a
    notebook edited after the build is reported as stale by the download test below,
    not as missing outputs here."""
    parts = Path(page).with_suffix(".ipynb").parts
    # Each edition has its own _sources/: _build/html/_sources/ and _build/html/zh/_sources/.
    if parts[0] == "zh":
        copy = SITE / "zh" / "_sources" / Path(*parts[1:])
    else:
        copy = SITE / "_sources" / Path(*parts)
    return copy if copy.is_file() else notebook_source(page)


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_code_outputs_are_on_the_page(visitor, page):
    expected = _expected_cells(_built_from(page))
    visit = visitor.visit(page)
    assert len(visit.cells) == len(expected), (
        f"{page}: {len(visit.cells)} code cells on the page, {len(expected)} in the notebook"
    )
    assert any(c["has_output"] for c in expected) or not expected, (
        f"{page}: the notebook has no stored outputs (execute it in place before committing)"
    )
    for i, (want, got) in enumerate(zip(expected, visit.cells)):
        if not want["has_output"]:
            continue
        where = f"{page}, code cell {i + 1} ({want['source']!r})"
        assert got["outputs"] >= 1, f"{where}: the stored output is not on the page"
        assert got["outputText"] or got["outputImages"], f"{where}: the output is empty"
        if not got["hiddenOutput"]:
            assert got["outputHeight"] > 0, f"{where}: the output is not displayed"


def _repo_parts(config: dict) -> tuple[str, str, str, str]:
    repo = config["repository"]
    url = repo["url"].rstrip("/")
    parts = urlsplit(url)
    org, name = parts.path.strip("/").split("/")[:2]
    prefix = (repo.get("path_to_book") or "").strip("/")
    return org, name, repo.get("branch", "main"), (prefix + "/" if prefix else "")


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_launch_links_point_at_this_notebook(visitor, page):
    config = book_config()
    org, name, branch, prefix = _repo_parts(config)
    launch = config["launch_buttons"]
    repo_path = prefix + Path(page).with_suffix(".ipynb").as_posix()
    # The path the links name is a real notebook of the repository (path_to_book accounted for).
    assert (BOOK_ROOT / Path(page).with_suffix(".ipynb")).is_file()

    visit = visitor.visit(page)
    colab = f"{launch['colab_url'].rstrip('/')}/github/{org}/{name}/blob/{branch}/{repo_path}"
    binder = (
        f"{launch['binderhub_url'].rstrip('/')}/v2/gh/{org}/{name}/{branch}"
        f"?urlpath=tree/{repo_path}"
    )
    assert visit.launch_links["colab"] == [colab], f"{page}: Colab links {visit.launch_links}"
    assert visit.launch_links["binder"] == [binder], f"{page}: Binder links {visit.launch_links}"


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_notebook_download_is_the_notebook(visitor, page):
    visit = visitor.visit(page)
    assert len(visit.download_links) == 1, f"{page}: download links {visit.download_links}"
    served = SITE / urlsplit(visit.download_links[0]).path.lstrip("/")
    source = notebook_source(page)
    assert served.is_file(), f"{page}: the .ipynb download {served} is missing"
    assert json.loads(served.read_text("utf-8")) == json.loads(source.read_text("utf-8")), (
        f"{page}: the download differs from {source.relative_to(BOOK_ROOT)}: "
        "the notebook changed after the book was built (rebuild: make book)"
    )


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_footer_names_year_and_licences_and_the_favicon_is_ours(visitor, page):
    visit = visitor.visit(page)
    year = str(book_config()["copyright"])
    for needed in (year, "MIT", "CC BY 4.0"):
        assert needed in visit.footer, f"{page}: footer lacks {needed!r}: {visit.footer!r}"
    assert visit.favicon.endswith("_static/favicon.png"), f"{page}: favicon {visit.favicon!r}"


CHAPTERS_WITH_EXERCISES = [
    p for p in NOTEBOOK_PAGES
    if p.startswith("chapters/") and Path(p).name[:2].isdigit() and 1 <= int(Path(p).name[:2]) <= 8
]


@pytest.mark.parametrize("page", CHAPTERS_WITH_EXERCISES)
def test_chapter_links_to_its_exercise(visitor, page):
    number = Path(page).name[:2]
    visit = visitor.visit(page)
    targets = [urlsplit(href).path.lstrip("/") for href in visit.article_links]
    wanted = [t for t in targets if t.startswith(f"exercises/ex{number}_") and t.endswith(".html")]
    assert wanted, f"{page}: no link to exercise {number} in the chapter"
    assert all((SITE / t).is_file() for t in wanted), wanted


def _cross_attention_chapter() -> str | None:
    for page in PAGES:
        if page.startswith("chapters/") and "cross_attention" in page:
            return page
    return None


def test_search_finds_the_cross_attention_chapter(visitor, site_url):
    chapter = _cross_attention_chapter()
    if chapter is None:
        pytest.skip("no cross-attention chapter in the built book yet")
    driver = visitor.driver
    driver.get_log("browser")
    driver.get(site_url + "search.html?q=cross-attention")
    end = time.monotonic() + 20
    results: list[str] = []
    summary = ""
    while time.monotonic() < end:
        state = driver.execute_script(
            "const s = document.querySelector('#search-results .search-summary, "
            "#search-results p');"
            "return {summary: s ? s.textContent : '', "
            "links: Array.from(document.querySelectorAll('#search-results ul.search li a'))"
            ".map(a => a.getAttribute('href'))};"
        )
        summary, results = state["summary"], state["links"]
        if "found" in summary.lower() or "did not match" in summary.lower():
            break
        time.sleep(0.1)
    driver.save_screenshot(str(SHOTS / "search--cross-attention.png"))
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    pages = [urlsplit(href).path.lstrip("/") for href in results]
    assert chapter in pages, f"search for 'cross-attention' ({summary!r}) returned {pages}"


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_server_answered_every_request_of_the_page(visitor, page):
    # Anything the page asked for (a script, a font, an image) and did not get, including the
    # /favicon.ico Chromium probes by itself on the redirect stubs (index.html, zh/index.html).
    failed = visitor.visit(page).failed_requests
    assert not failed, f"{page}: requests the site could not answer: {failed}"


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_page_passes_axe_wcag_a_and_aa(visitor, page):
    # axe-core (tests/browser/vendor/axe.min.js) with the WCAG 2 A and AA rules (the colour
    # rules left out on the Chinese twin of an English page: conftest.colour_rules_skipped).
    visit = visitor.visit(page)
    report = [
        f"{v['id']} ({v['impact']}, {v['count']} nodes): {v['help']}\n    " + "\n    ".join(v["nodes"])
        for v in visit.axe_violations
    ]
    assert not report, f"{page}: accessibility violations:\n" + "\n".join(report)


@pytest.mark.parametrize("width", [DESKTOP_WIDTH, PHONE_WIDTH])
@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_display_equations_fit_their_column(visitor, page, width):
    visit = visitor.visit(page)
    over = visit.overflowing_equations[width]
    assert not over, (
        f"{page}: {len(over)} of {visit.display_equations} display equations are wider than their "
        f"column in a {width}-px window (break them over lines, e.g. with aligned):\n"
        + "\n".join(f"  {e['width']} px in {e['avail']} px: {e['tex']}" for e in over)
    )


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_colab_setup_cell_is_in_the_notebook_but_not_on_the_page(visitor, page):
    nb = json.loads(notebook_source(page).read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and code[0].startswith(SETUP_HEADER), f"{page}: the notebook lost its setup cell"
    html = (SITE / page).read_text(encoding="utf-8")
    assert not any(header.lstrip("# ") in html for header in SETUP_HEADER), f"{page}: the Colab setup cell is shown on the page"


def _quiz_json(page: str) -> list | None:
    nb = json.loads(notebook_source(page).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "display_quiz(" in source:
            name = source.split('quiz = "', 1)[1].split('"', 1)[0]
            return json.loads((notebook_source(page).parent / name).read_text(encoding="utf-8"))
    return None


QUIZ_PAGES = [p for p in NOTEBOOK_PAGES if _quiz_json(p) is not None]


@pytest.mark.parametrize("page", QUIZ_PAGES)
def test_quiz_checks_answers_and_explains_them(visitor, site_url, page):
    """Answer every question of the page's quiz as a reader would, offline: click a choice, or
    type the right number and press Enter; the explanation of that answer must appear."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    questions = _quiz_json(page)
    driver = visitor.driver
    visitor.visit(page)  # loaded once: the visit reads the page and answers nothing
    if driver.current_url != site_url + page:  # another test went elsewhere since
        driver.get(site_url + page)
    driver.get_log("browser")
    rendered = driver.find_elements(By.CSS_SELECTOR, "div[data-shufflequestions] .Quiz")
    assert len(rendered) == len(questions), f"{page}: {len(rendered)} quiz questions shown, {len(questions)} in its JSON"
    for quiz, q in zip(rendered, questions):
        text = quiz.text
        # The reader sees the question (answers are shuffled, questions are not).
        assert html.unescape(q["question"])[:40] in text, f"{page}: question {q['question'][:40]!r} not in {text[:200]!r}"
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", quiz)
        if q["type"] == "multiple_choice":
            choice = quiz.find_elements(By.CSS_SELECTOR, "label.MCButton")[0]
            picked = choice.get_attribute("data-feedback")
            choice.click()
        else:
            right = next(a for a in q["answers"] if a.get("correct"))
            box = quiz.find_element(By.CSS_SELECTOR, "input.Input-text")
            box.click()
            box.send_keys(str(right["value"]))
            box.send_keys(Keys.ENTER)
            picked = right["feedback"]
        feedback = quiz.find_element(By.CSS_SELECTOR, ".Feedback")
        picked = html.unescape(picked)  # quiz text is HTML (&lt;bos&gt; shows as <bos>)
        assert feedback.is_displayed() and feedback.text.strip() == picked.strip(), (
            f"{page}: after answering {q['question'][:40]!r} the page shows {feedback.text!r}, "
            f"not the explanation {picked!r}"
        )
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"{page}: console errors while answering the quiz: {severe}"


@pytest.mark.parametrize("page", [p for p in NOTEBOOK_PAGES if "JCResponses" in (SITE / p).read_text(encoding="utf-8")])
def test_mathjax_runs_before_the_quizzes_read_it(page):
    # jupyterquiz's script reads MathJax.version 0.5 s after a quiz renders; a deferred or
    # async MathJax may not have run by then on a slow machine (a TypeError, then a CDN load).
    source = (SITE / page).read_text(encoding="utf-8")
    tags = [t for t in re.findall(r"<script[^>]*>", source) if "mathjax/tex-chtml.js" in t]
    assert len(tags) == 1, f"{page}: MathJax script tags {tags}"
    assert "defer" not in tags[0] and "async" not in tags[0], f"{page}: {tags[0]}"
