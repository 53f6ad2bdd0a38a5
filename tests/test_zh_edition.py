"""The Chinese edition (zh/) cannot drift from the English one (issue 16).

* A translation names the English text it translates (sha256 of the cell's source, and the
  text itself). When the English cell changes, the translation is outdated: the test below
  fails and names the page, the cell id and what changed, until a translator updates the
  Chinese and runs `python zh/zh_edition.py --accept PAGE CELL_ID` (zh/README.md).
* The Chinese notebooks are generated (zh/zh_edition.py): their code cells, outputs and
  metadata are the English ones byte for byte, so nbval over the English notebooks checks
  the Chinese code too; the tests below prove it for the committed files, and that they are
  what the generator makes from the current English notebooks and translations.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "zh"))

import zh_edition as zh  # noqa: E402

NOTEBOOK_PAGES = zh.notebook_pages()
TRANSLATED_PAGES = sorted(
    p.relative_to(zh.TRANSLATIONS).with_suffix("").as_posix()
    for p in zh.TRANSLATIONS.rglob("*.json")
    if p.parent.name != "quizzes"
)


def _english_cells(page: str) -> dict[str, dict]:
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    return {cell["id"]: cell for cell in nb["cells"]}


def _diff(old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "translated from", "English now", lineterm="", n=1)
    return "\n".join(list(lines)[:30])


@pytest.mark.parametrize("page", TRANSLATED_PAGES)
def test_translation_file_belongs_to_a_page_of_the_book(page):
    assert page in NOTEBOOK_PAGES, f"zh/translations/{page}.json: no notebook {page}.ipynb in _toc.yml"


@pytest.mark.parametrize("page", TRANSLATED_PAGES)
def test_every_translated_cell_translates_the_current_english_text(page):
    if page not in NOTEBOOK_PAGES:
        pytest.skip("not a page of the book (see the test above)")
    english = _english_cells(page)
    problems = []
    for cell_id, entry in zh.load_translation(page)["cells"].items():
        if not entry.get("zh", "").strip():
            continue  # not translated yet: shown in English, with a note on the page
        cell = english.get(cell_id)
        if cell is None:
            problems.append(f"cell {cell_id}: no longer in {page}.ipynb (the English cell was removed "
                            f"or re-created with a new id); its translation begins {entry['zh'][:60]!r}")
        elif cell["cell_type"] != "markdown":
            problems.append(f"cell {cell_id}: is a {cell['cell_type']} cell in English, not Markdown")
        elif entry.get("en_sha256") != zh.text_hash(zh.cell_text(cell)):
            problems.append(f"cell {cell_id}: the English text changed since it was translated:\n"
                            + _diff(entry.get("en", ""), zh.cell_text(cell)))
    assert not problems, (
        f"{page}: {len(problems)} outdated translation(s) in zh/translations/{page}.json. Update the "
        f"\"zh\" text, then run: python zh/zh_edition.py --accept {page} <cell id>\n\n" + "\n\n".join(problems)
    )


@pytest.mark.parametrize("page", list(zh.HAND_TRANSLATED))
def test_hand_translated_page_translates_the_current_english_page(page):
    state, detail = zh.hand_translation_state(page)
    assert state == "translated", (
        f"{detail}. Update zh/{zh.HAND_TRANSLATED[page]} to the English {page}.md "
        f"(`git log -p {page}.md` shows what changed), then make its first line:\n"
        f"{zh.hand_translation_header(page)}"
    )


def test_every_page_of_the_book_has_a_chinese_page():
    missing = []
    for page in zh.english_pages():
        if page in zh.HAND_TRANSLATED:
            target = zh.ZH / zh.HAND_TRANSLATED[page]
        elif (ROOT / f"{page}.ipynb").is_file():
            target = zh.ZH / f"{page}.ipynb"
        elif (ROOT / f"{page}.md").is_file():
            target = zh.ZH / f"{page}.md"
        else:
            continue  # listed in _toc.yml before its file exists: the English build reports it
        if not target.is_file():
            missing.append(f"{page} -> {target.relative_to(ROOT)}")
    assert not missing, "pages without a Chinese page (run `make book`):\n" + "\n".join(missing)


def test_generated_files_are_up_to_date():
    stale = [p.relative_to(ROOT).as_posix() for p in zh.stale_generated_files()]
    orphans = [p.relative_to(ROOT).as_posix() for p in zh.orphan_generated_files()]
    assert not stale and not orphans, (
        "zh/ is not what zh/zh_edition.py makes from the current English book: run `make book` "
        "(or python zh/zh_edition.py) and commit zh/.\n"
        f"out of date: {stale}\nno longer generated: {orphans}"
    )


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_chinese_notebook_has_the_english_code_cells_and_outputs_byte_for_byte(page):
    """The proof that nbval over the English notebook covers the Chinese one: the same code,
    the same stored outputs, the same metadata (tags included), in the same order. The only
    exception is the quiz cell's stored output, which shows the Chinese quiz."""
    zh_path = zh.ZH / f"{page}.ipynb"
    if not zh_path.is_file():
        pytest.fail(f"no zh/{page}.ipynb: run `make book`")
    english = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    chinese = json.loads(zh_path.read_text(encoding="utf-8"))
    en_code, zh_code = _code_cells(english), _code_cells(chinese)
    assert len(zh_code) == len(en_code), f"zh/{page}.ipynb: {len(zh_code)} code cells, English {len(en_code)}"
    for en_cell, zh_cell in zip(en_code, zh_code):
        where = f"zh/{page}.ipynb, code cell {en_cell['id']}"
        if "display_quiz(" in zh.cell_text(en_cell):
            assert {k: v for k, v in zh_cell.items() if k != "outputs"} == \
                   {k: v for k, v in en_cell.items() if k != "outputs"}, where
            continue
        assert json.dumps(zh_cell, sort_keys=True) == json.dumps(en_cell, sort_keys=True), (
            f"{where} differs from the English cell: the Chinese notebooks are generated, never "
            f"edited (run `make book`)"
        )
    assert chinese["metadata"] == english["metadata"], f"zh/{page}.ipynb: notebook metadata differs"


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_every_markdown_cell_is_either_translated_or_the_english_text(page):
    english = {c["id"]: zh.cell_text(c) for c in json.loads((ROOT / f"{page}.ipynb").read_text("utf-8"))["cells"]
               if c["cell_type"] == "markdown"}
    states = {cid: (state, entry) for cid, state, entry in zh.cell_states(page)}
    chinese = json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8"))
    shown = {c["id"]: zh.cell_text(c) for c in chinese["cells"] if c["cell_type"] == "markdown"}
    untranslated = 0
    for cid, text in english.items():
        state, entry = states[cid]
        want = entry["zh"] if state == "translated" else text
        untranslated += state != "translated"
        assert shown.get(cid) == want, f"zh/{page}.ipynb cell {cid}: not the {state} text"
    # A page that is not fully translated says so, in Chinese, at its top.
    assert (zh.NOTE_CELL_ID in shown) == bool(untranslated), f"zh/{page}.ipynb: translation note"


def test_every_part_of_the_table_of_contents_has_a_chinese_caption():
    missing = [part.get("caption") for part in zh.english_toc().get("parts", [])
               if part.get("caption") not in zh.CAPTIONS]
    assert not missing, f"add these _toc.yml captions to CAPTIONS in zh/zh_edition.py: {missing}"


QUIZ_TRANSLATIONS = sorted(p.stem for p in (zh.TRANSLATIONS / "quizzes").glob("*.json"))


@pytest.mark.parametrize("nn", QUIZ_TRANSLATIONS)
def test_translated_quiz_translates_the_current_english_quiz(nn):
    problems = zh.quiz_translation_problems(nn)
    assert not problems, (
        f"zh/translations/quizzes/{nn}.json: " + "; ".join(problems) + ". The Chinese page shows the English "
        f"quiz until it is fixed: update the translation, then python zh/zh_edition.py --accept quizzes/{nn}"
    )
