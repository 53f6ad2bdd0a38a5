"""The Chinese edition (zh/) cannot drift from the English one (issue 16).

* A translation names the English text it translates (sha256 of the cell's source, and the
  text itself). When the English cell changes, the translation is outdated: the test below
  fails and names the page, the cell id and what changed, until a translator updates the
  Chinese and runs `python zh/zh_edition.py --accept PAGE CELL_ID` (zh/README.md).
* The Chinese notebooks are generated (zh/zh_edition.py): their code cells, outputs and
  metadata are the English ones byte for byte (a page executed in Chinese: the code with its
  comments and strings translated, and outputs that show the English outputs' values), so
  nbval over the English notebooks checks the Chinese ones too (`make notebooks` does not run
  the Chinese chapters); the tests below prove it for the committed files, and that they are
  what the generator makes from the current English notebooks and translations. Two generated
  source changes are allowed (ALLOWED_CODE_CHANGES): the exercises' checks give Chinese
  feedback, and the quiz cell fetches the Chinese quiz on Colab. Two generated output changes:
  the quiz cell shows the Chinese quiz, and an exercise's check cells show the feedback in Chinese,
  as a run of the Chinese notebook prints it (the test below proves that it is the English output
  translated by mha.course.checks, and nothing else; tests/test_checks_language.py that this
  translation is what a run in Chinese prints).
* Links to the published English book in Chinese pages go to the Chinese edition.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "zh"))

import zh_edition as zh  # noqa: E402
from mha.course.checks import check_output_in  # noqa: E402

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


# The only two differences allowed between the source of an English code cell and its Chinese
# copy (both generated, zh_edition.ZH_CODE_CHANGES). The checks cell makes no output; the quiz
# cell's output is not compared (tag nbval-ignore-output) and its URL is used only where the quiz
# file is missing (Colab). (The outputs that differ, check cells and the quiz, are tested below.)
ALLOWED_CODE_CHANGES = {
    'grader = Notebook(tests_dir="tests")': 'grader = Notebook(tests_dir="tests", language="zh")',
    '/main/chapters/" + quiz': '/main/zh/chapters/" + quiz',
}


EXECUTED_PAGES = zh.executed_pages()


def _expected_zh_source(page: str, en_cell: dict, first_code_id: str | None) -> str:
    """What the Chinese copy of an English code cell must hold: the English source, or its
    code translation when it has a current one (checked below to change only comments and
    strings), with ALLOWED_CODE_CHANGES applied; on an executed page the first code cell also
    switches the figures to Chinese (zh.ZH_LANGUAGE_LINES)."""
    source = zh.cell_text(en_cell)
    entry = zh.code_translations(page).get(en_cell["id"])
    if entry and entry.get("zh", "").strip() and entry.get("en_sha256") == zh.text_hash(source):
        source = entry["zh"]
    for english_text, chinese_text in ALLOWED_CODE_CHANGES.items():
        source = source.replace(english_text, chinese_text)
    if page in EXECUTED_PAGES and en_cell["id"] == first_code_id:
        source = zh.with_zh_figures(source, draws=zh.has_figure(en_cell))
    return source


def _expected_zh_metadata(page: str, en_cell: dict) -> dict:
    """The English cell's metadata, but for its figure's alt text (mystnb.image.alt): the
    Chinese one under "alt" in the translation file, when it translates the current English."""
    metadata = json.loads(json.dumps(en_cell.get("metadata", {})))
    english_alt = metadata.get("mystnb", {}).get("image", {}).get("alt")
    entry = zh.load_translation(page).get("alt", {}).get(en_cell["id"])
    if english_alt and entry and entry.get("zh", "").strip() and entry.get("en_sha256") == zh.text_hash(english_alt):
        metadata["mystnb"]["image"]["alt"] = entry["zh"]
    return metadata


# Tags of cells whose outputs nbval does not compare (their values may differ from run to run).
NBVAL_UNCOMPARED = {"nbval-ignore-output", "nbval-skip"}


def _nbval_sanitizers() -> list[tuple[re.Pattern, str]]:
    """The patterns of tests/nbval_sanitize.cfg (timings, addresses) and their replacements."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg", encoding="utf-8")
    return [(re.compile(config[section]["regex"]), config[section]["replace"]) for section in config.sections()]


NBVAL_SANITIZERS = _nbval_sanitizers()


def _sanitized(text: str) -> str:
    """``text`` as nbval compares it: with the patterns of tests/nbval_sanitize.cfg replaced."""
    for pattern, replacement in NBVAL_SANITIZERS:
        text = pattern.sub(replacement, text)
    return text


def _shown(cell: dict) -> tuple:
    """What a run of a code cell showed, as nbval compares it (after its sanitizing, with the
    consecutive pieces of one stream as one output): the kind of each output, and the numbers
    in them."""
    from collections import Counter

    kinds, numbers = [], Counter()
    for out in cell.get("outputs", []):
        kind = (out.get("output_type"), out.get("name"), sorted(out.get("data", {})))
        if not (kinds and kind == kinds[-1] and kind[0] == "stream"):
            kinds.append(kind)
        texts = [out.get("text", "")] + [v for k, v in sorted(out.get("data", {}).items()) if k.startswith("text/")]
        for text in texts:
            numbers.update(zh.NUMBER.findall(_sanitized(zh.cell_text({"source": text}))))
    return kinds, numbers


def _shows_the_same(en_cell: dict, zh_cell: dict) -> str | None:
    """None if the Chinese run of a code cell shows what the English run shows: the same kinds
    of output, and the same numbers but those written in the string literals of either cell (a
    translation may write "1" where the English says "one"); else what differs."""
    (en_kinds, en_numbers), (zh_kinds, zh_numbers) = _shown(en_cell), _shown(zh_cell)
    if en_kinds != zh_kinds:
        return f"kinds of output: English {en_kinds}, Chinese {zh_kinds}"
    written = zh._literal_numbers(zh.cell_text(en_cell)) | zh._literal_numbers(zh.cell_text(zh_cell))
    only_en, only_zh = en_numbers - zh_numbers - written, zh_numbers - en_numbers - written
    if only_en or only_zh:
        return f"numbers only the English run shows {sorted(only_en.elements())}, only the Chinese {sorted(only_zh.elements())}"
    return None


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_chinese_notebook_has_the_english_code_cells_and_outputs(page):
    """The Chinese code cells are the English ones: the same code, the same metadata (tags
    included), in the same order, and (on a page that is not executed in Chinese) the same stored
    outputs byte for byte. The only exceptions: the code translations of
    zh/translations/<page>.json (comments and strings only: next test), the two source changes
    of ALLOWED_CODE_CHANGES, the figures' language switch of an executed page, and the outputs:
    the quiz cell's shows the Chinese quiz, an exercise's check cells show the English output
    translated (check_output_in: the output a run in Chinese prints), and an executed page's are
    those of its Chinese run. That run must show what the English outputs show (the same kinds of
    output, the same numbers but those written in the cell's strings), which nbval checks by
    running the English notebook again (`make notebooks`): the Chinese chapters are not run
    there, since their code is the English code (next test) and their values are checked here."""
    zh_path = zh.ZH / f"{page}.ipynb"
    if not zh_path.is_file():
        pytest.fail(f"no zh/{page}.ipynb: run `make book`")
    english = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    chinese = json.loads(zh_path.read_text(encoding="utf-8"))
    en_code, zh_code = _code_cells(english), _code_cells(chinese)
    assert len(zh_code) == len(en_code), f"zh/{page}.ipynb: {len(zh_code)} code cells, English {len(en_code)}"
    first_code_id = zh._first_code_cell_id(english)
    executed = page in EXECUTED_PAGES
    for en_cell, zh_cell in zip(en_code, zh_code):
        where = f"zh/{page}.ipynb, code cell {en_cell['id']}"
        source = _expected_zh_source(page, en_cell, first_code_id)
        assert zh.cell_text(zh_cell) == source, f"{where}: the source is not the English one {_diff(source, zh.cell_text(zh_cell))}"
        check_cell = page.startswith("exercises/") and zh.CHECK_CELL.search(source)
        # an exercise's translated cell that printed something: the output of a Chinese run
        printed = page.startswith("exercises/") and en_cell.get("outputs") and \
            source != zh.zh_code(zh.cell_text(en_cell))
        ignored = {"source", "outputs", "execution_count"} if executed else \
            {"source", "outputs"} if "display_quiz(" in zh.cell_text(en_cell) or check_cell or printed else {"source"}
        if printed:
            assert zh.printed_values(zh_cell) == zh.printed_values(en_cell), (
                f"{where}: the output does not show what the English one shows (its numbers and "
                f"kinds of output): run python zh/zh_edition.py --execute {page}")
        if executed and not NBVAL_UNCOMPARED & set(en_cell.get("metadata", {}).get("tags", [])):
            difference = _shows_the_same(en_cell, zh_cell)
            assert difference is None, (
                f"{where}: the Chinese run does not show what the English one shows ({difference}): a "
                f"run of older code, or code that behaves otherwise in zh/: run python zh/zh_edition.py "
                f"--execute {page}")
        if check_cell and not executed:
            want = [dict(out, data=check_output_in("zh", out["data"])) if "data" in out else out
                    for out in en_cell["outputs"]]
            got = [dict(out, data={k: zh.cell_text({"source": v}) for k, v in out["data"].items()})
                   if "data" in out else out for out in zh_cell["outputs"]]
            assert got == want, f"{where}: the output is not the English one in Chinese (run `make book`)"
        expected = dict(en_cell, metadata=_expected_zh_metadata(page, en_cell))
        assert json.dumps({k: v for k, v in zh_cell.items() if k not in ignored}, sort_keys=True) == \
               json.dumps({k: v for k, v in expected.items() if k not in ignored}, sort_keys=True), (
            f"{where} differs from the English cell: the Chinese notebooks are generated, never "
            f"edited (run `make book`)"
        )
    assert chinese["metadata"] == english["metadata"], f"zh/{page}.ipynb: notebook metadata differs"


CODE_TRANSLATED_PAGES = sorted(p for p in NOTEBOOK_PAGES if zh.code_translations(p))


@pytest.mark.parametrize("page", CODE_TRANSLATED_PAGES)
def test_code_translation_changes_only_comments_and_strings_of_the_current_english_code(page):
    """A code translation translates the code cell as it is now (its en_sha256) and changes
    nothing but comments and the text of string literals (zh.code_skeleton: the code's syntax
    tree with every string emptied; the fields of an f-string stay)."""
    english = _english_cells(page)
    problems = []
    for cell_id, state, entry in zh.code_states(page):
        if state == "missing":
            problems.append(f"code cell {cell_id}: no longer a code cell of {page}.ipynb")
            continue
        if state == "outdated":
            problems.append(f"code cell {cell_id}: the English code changed since it was translated:\n"
                            + _diff(entry.get("en", ""), zh.cell_text(english[cell_id])))
            continue
        if zh.code_skeleton(entry["zh"]) != zh.code_skeleton(zh.cell_text(english[cell_id])):
            problems.append(f"code cell {cell_id}: the translation changes more than comments and strings:\n"
                            + _diff(zh.cell_text(english[cell_id]), entry["zh"]))
    assert not problems, (
        f"{page}: code translations in zh/translations/{page}.json. Update the \"zh\" code, then run "
        f"python zh/zh_edition.py --accept {page} <cell id> and --execute {page}\n\n" + "\n\n".join(problems))


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_every_alt_text_translation_translates_the_current_english_alt_text(page):
    """A figure's Chinese alt text ("alt" in the translation file) names the English alt text it
    translates; when the English changes, the figure's alt text is shown in English and this fails."""
    english = _english_cells(page)
    problems = []
    for cell_id, entry in zh.load_translation(page).get("alt", {}).items():
        english_alt = (english.get(cell_id, {}).get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt"))
        if english_alt is None:
            problems.append(f"cell {cell_id}: no longer a figure with alt text in {page}.ipynb")
        elif entry.get("en_sha256") != zh.text_hash(english_alt):
            problems.append(f"cell {cell_id}: the English alt text changed since it was translated:\n"
                            + _diff(entry.get("en", ""), english_alt))
    assert not problems, (f"{page}: alt texts in zh/translations/{page}.json. Update the \"zh\" text, then run "
                          f"python zh/zh_edition.py --accept {page} <cell id>\n\n" + "\n\n".join(problems))


EXERCISE_PAGES = [p for p in NOTEBOOK_PAGES if p.startswith("exercises/")]


@pytest.mark.parametrize("page", EXERCISE_PAGES)
def test_chinese_exercise_code_is_translated_and_what_it_prints_comes_from_a_chinese_run(page):
    """The Chinese exercise's code cells have their comments, docstrings and printed text in
    Chinese (issue 20.6, 23.6): every code cell with an English comment or docstring (three words
    or more: "# (layer, head)" names variables) has a current code translation, and a translated
    cell whose English run printed something shows the output of a run of its Chinese code
    (zh_edition.waiting_for_run: until `--execute PAGE`, the English cell)."""
    import io
    import tokenize

    def prose(source):
        return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if (t.type == tokenize.COMMENT or t.type == tokenize.STRING and t.string.startswith('"""'))
                and len(re.findall(r"[A-Za-z]{2,}", t.string)) >= 3]

    english = _code_cells(json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8")))
    translated = {cid for cid, state, _ in zh.code_states(page) if state == "translated"}
    # The Colab setup cell stays English: the book hides it by its first line (_ext/hide_setup_cell.py).
    untranslated = {c["id"]: prose(zh.cell_text(c))[0] for c in english
                    if c["id"] not in translated and prose(zh.cell_text(c))
                    and not zh.cell_text(c).startswith(zh.SETUP_HEADER)}
    assert not untranslated, (f"{page}: code cells with English comments and no current code translation "
                              f"(zh/README.md): {untranslated}")
    assert not zh.waiting_for_run(page), (
        f"zh/{page}.ipynb: translated cells {zh.waiting_for_run(page)} are shown in English until the Chinese "
        f"notebook is run: flock /tmp/zh_edition.lock python zh/zh_edition.py --execute {page}")


def test_a_translated_exercise_cell_waits_for_a_chinese_run_when_its_output_changes():
    """printed_values ignores the text of the string literals (translated) but not the values."""
    cell = {"source": 'print("largest difference:", d)  # 3 digits\n', "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "largest difference: 0.25\n"}]}
    chinese = {"source": 'print("最大差异：", d)  # 3 位\n', "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "最大差异： 0.25\n"}]}
    assert zh.printed_values(chinese) == zh.printed_values(cell)
    stale = dict(chinese, outputs=[dict(chinese["outputs"][0], text="最大差异： 0.5\n")])
    assert zh.printed_values(stale) != zh.printed_values(cell)
    counted = {"source": 'print("t = 1000:", d)\n', "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "t = 1000: 0.25\n"}]}
    assert zh.printed_values(counted) == zh.printed_values(cell)  # numbers written in a string are text


@pytest.mark.slow
@pytest.mark.parametrize("page", EXERCISE_PAGES)
def test_a_chinese_exercise_is_graded_like_the_english_one(page, tmp_path, monkeypatch):
    """The Chinese handout, as a learner gets it, runs without an error and gets 0 points; with
    the solution's answers in its answer cells (a Chinese learner's finished notebook) it gets
    every point, as the English solution does (tests/test_exercises_grading.py), and the grader
    sees no difference from the Chinese handout (no tampering note): its locked cells are the
    translated ones. (selfcheck's path: the cells run in one namespace, then every test file.)"""
    import copy

    import nbformat

    from grading import selfcheck
    from grading.worker import Exercise, Notes, inspect_submission

    exercise = page.split("/")[1]
    autograder = ROOT / "grading" / "autograder" / exercise
    monkeypatch.chdir(tmp_path)  # otter.Notebook writes .OTTER_LOG to the cwd
    monkeypatch.setenv("MHA_CHECK_TIME_LIMIT", "20")
    monkeypatch.delenv("MHA_COURSE_SOURCE", raising=False)
    handout = nbformat.read(zh.ZH / f"{page}.ipynb", as_version=4)
    solution = nbformat.read(autograder / f"{exercise}-solution.ipynb", as_version=4)
    answer_cells = {c.id for c in handout.cells if "otter_answer_cell" in c.metadata.get("tags", [])}
    answers = {c.id: c.source for c in solution.cells if c.id in answer_cells}
    assert len(answers) == len(answer_cells) > 0
    solved = copy.deepcopy(handout)
    for cell in solved.cells:
        if cell.id in answers:
            cell.source = answers[cell.id]
    full = {q: p for q, p in json.loads((autograder / "manifest.json").read_text())["questions"].items()
            if (exercise, q) not in selfcheck.SLOW_QUESTIONS}
    for nb, expected in ((handout, {q: 0 for q in full}), (solved, full)):
        namespace, errors = selfcheck.run_cells(nb, exercise)
        got = {q: v["score"] for q, v in selfcheck.score(namespace, exercise, quick=True, language="zh").items()}
        assert (errors, got) == ([], expected)
    notes = Notes()
    inspect_submission(solved, Exercise.load(autograder, ROOT / f"{page}.ipynb", zh.ZH / f"{page}.ipynb"), notes)
    assert notes.items == []


@pytest.mark.parametrize("page", EXECUTED_PAGES)
def test_executed_chinese_page_draws_its_own_figures(page):
    """A page executed in Chinese stores the figures of its Chinese run: none is byte-identical
    to the English figure (an identical one would mean the page was not re-executed)."""
    english = {c["id"]: c for c in _code_cells(json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8")))}
    chinese = _code_cells(json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8")))

    def images(cell):
        return [zh.cell_text({"source": out["data"]["image/png"]}) for out in cell.get("outputs", [])
                if "image/png" in out.get("data", {})]

    same, count = [], 0
    for cell in chinese:
        for zh_image, en_image in zip(images(cell), images(english[cell["id"]])):
            count += 1
            if zh_image == en_image:
                same.append(cell["id"])
    assert not same, f"zh/{page}.ipynb: figures identical to the English ones in cells {same}: " \
                     f"run python zh/zh_edition.py --execute {page}"
    assert count or not any(images(c) for c in english.values()), f"zh/{page}.ipynb: no figure stored"


@pytest.mark.parametrize("page", EXECUTED_PAGES)
def test_no_figure_of_a_chinese_run_is_drawn_before_the_switch_to_chinese(page):
    """A figure drawn before plotting.use_language("zh") has English labels, and its Chinese
    text shows as empty boxes: the switch comes before the first cell that draws, or opens it."""
    switched = False
    for cell in _code_cells(json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8"))):
        text = zh.cell_text(cell)
        if zh.has_figure(cell):
            assert switched or text.startswith(zh.ZH_LANGUAGE_LINES), \
                f"zh/{page}.ipynb, cell {cell['id']}: draws before the figures are switched to Chinese"
        switched = switched or zh.ZH_LANGUAGE_LINES.strip() in text


def test_code_skeleton_sees_code_changes_but_not_comments_or_strings():
    english = 'x = f(a, b)  # sum\nprint(f"total {x:>8}")\n'
    assert zh.code_skeleton('x = f(a, b)  # 求和\nprint(f"总计 {x:>8}")\n') == zh.code_skeleton(english)
    assert zh.code_skeleton('x = f(b, a)\nprint(f"total {x:>8}")\n') != zh.code_skeleton(english)
    assert zh.code_skeleton('x = f(a, b)\nprint(f"total {y:>8}")\n') != zh.code_skeleton(english)
    assert zh.code_skeleton('x = f(a, b)\nprint(f"total {x:>8}", 1)\n') != zh.code_skeleton(english)



def test_code_skeleton_keeps_ipython_magics_as_they_are():
    english = "%matplotlib inline\nimport torch  # tensors\n"
    assert zh.code_skeleton("%matplotlib inline\nimport torch  # 张量\n") == zh.code_skeleton(english)
    assert zh.code_skeleton("%matplotlib notebook\nimport torch\n") != zh.code_skeleton(english)
    assert zh.code_skeleton("import torch\n") != zh.code_skeleton(english)

def test_plotting_labels_follow_the_language_and_chinese_has_a_cjk_font():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from mha.course import plotting

    try:
        plotting.use_language("zh")
        ax = plotting.plot_attention(np.full((2, 3), 1 / 3))
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("键（被关注）", "查询（发起关注）")
        assert plotting.cjk_font() in matplotlib.rcParams["font.sans-serif"][:1]
        from matplotlib import font_manager
        path = font_manager.findfont(font_manager.FontProperties(family=["sans-serif"]))
        from matplotlib.ft2font import FT2Font
        assert FT2Font(path).get_char_index(ord("键")), f"{path} has no glyph for 键: it would draw a box"
        plt.close("all")
        plotting.use_language("en")
        ax = plotting.plot_attention(np.full((2, 3), 1 / 3))
        assert ax.get_xlabel() == "key (attended to)"
        assert plotting.cjk_font() not in matplotlib.rcParams["font.sans-serif"][:1]
        with pytest.raises(ValueError, match="unknown language"):
            plotting.use_language("fr")
    finally:
        plotting.use_language("en")
        plt.close("all")


def test_the_allowed_code_changes_are_the_ones_the_generator_makes():
    assert {en: zh_text for en, zh_text, _ in zh.ZH_CODE_CHANGES} == ALLOWED_CODE_CHANGES
    for english_text in ALLOWED_CODE_CHANGES:  # each one still applies to the English book
        assert any(english_text in zh.cell_text(c) for page in NOTEBOOK_PAGES
                   for c in _code_cells(json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8")))), english_text


@pytest.mark.parametrize("page", [p for p in NOTEBOOK_PAGES if p.startswith("exercises/")])
def test_chinese_exercise_gives_its_feedback_in_chinese(page):
    chinese = json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8"))
    code = [zh.cell_text(c) for c in _code_cells(chinese)]
    assert any('grader = Notebook(tests_dir="tests", language="zh")' in c for c in code), \
        f"zh/{page}.ipynb: its checks cell does not ask for Chinese feedback"


@pytest.mark.parametrize("page", [p for p in NOTEBOOK_PAGES if p.startswith("exercises/")])
def test_chinese_exercise_check_cells_show_chinese_feedback(page):
    chinese = json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8"))
    shown = ["".join(out["data"]["text/plain"]) for c in _code_cells(chinese) if zh.CHECK_CELL.search(zh.cell_text(c))
             for out in c["outputs"] if "text/plain" in out.get("data", {})]
    assert shown, f"zh/{page}.ipynb: no stored check output"
    for text in shown:
        assert re.match(r"q\d+ 结果：", text) and "results:" not in text and "Test case failed" not in text, text


QUIZ_PAGES = [p for p in NOTEBOOK_PAGES if any("display_quiz(" in zh.cell_text(c) for c in
              _code_cells(json.loads((ROOT / f"{p}.ipynb").read_text(encoding="utf-8"))))]


@pytest.mark.parametrize("page", QUIZ_PAGES)
def test_chinese_quiz_cell_on_colab_fetches_the_chinese_quiz(page, tmp_path, monkeypatch):
    """Run the Chinese quiz cell where only the notebook was downloaded (Colab): it must fetch
    zh/chapters/quizzes/NN.json of the repository, which the generator writes."""
    chinese = json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8"))
    cell = next(zh.cell_text(c) for c in _code_cells(chinese) if "display_quiz(" in zh.cell_text(c))
    shown = []
    fake = type(sys)("jupyterquiz")
    fake.display_quiz = shown.append
    monkeypatch.setitem(sys.modules, "jupyterquiz", fake)
    monkeypatch.chdir(tmp_path)
    exec(compile(cell, f"<zh/{page} quiz cell>", "exec"), {})
    prefix = "https://raw.githubusercontent.com/mha-course/multi-head-attention/main/"
    assert len(shown) == 1 and shown[0].startswith(prefix + "zh/chapters/quizzes/"), shown
    assert (ROOT / shown[0].removeprefix(prefix)).is_file(), f"the repository has no {shown[0]}"
    assert json.loads((ROOT / shown[0].removeprefix(prefix)).read_text(encoding="utf-8")) == \
        zh.zh_quiz(Path(shown[0]).stem)


def test_links_to_the_published_book_in_chinese_pages_go_to_the_chinese_edition():
    link = re.compile(re.escape(zh.PUBLISHED_BOOK) + r"([^)\s\"'>]*)")
    wrong, checked = [], 0
    for page in NOTEBOOK_PAGES:
        chinese = json.loads((zh.ZH / f"{page}.ipynb").read_text(encoding="utf-8"))
        for cell in chinese["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for target in link.findall(zh.cell_text(cell)):
                checked += 1
                path = target.split("#")[0]
                if not path.startswith("zh/") or not (ROOT / path).with_suffix(".ipynb").is_file() \
                        and not (ROOT / path).with_suffix(".md").is_file():
                    wrong.append(f"zh/{page}.ipynb cell {cell['id']}: {zh.PUBLISHED_BOOK}{target}")
    assert checked, "no link to the published book found: has the URL changed? (zh_edition.PUBLISHED_BOOK)"
    assert not wrong, "links that do not reach a page of the Chinese edition:\n" + "\n".join(wrong)


def test_the_english_link_rewrite_keeps_everything_but_the_edition():
    book = zh.PUBLISHED_BOOK
    assert zh.zh_markdown(f"[第 1 章]({book}chapters/01_self_attention.html#x)") == \
        f"[第 1 章]({book}zh/chapters/01_self_attention.html#x)"
    assert zh.zh_markdown(f"[中文]({book}zh/intro.html)") == f"[中文]({book}zh/intro.html)"
    assert zh.zh_markdown("[local](01_self_attention.ipynb)") == "[local](01_self_attention.ipynb)"


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
        want = zh.zh_markdown(entry["zh"] if state == "translated" else text)
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


def test_every_glossary_definition_is_translated_from_the_current_english():
    """The Chinese glossary defines every term in Chinese (zh/translations/glossary.yml), each
    translation naming the English definition it translates; an edited English definition
    fails here until the Chinese is updated and `python zh/zh_edition.py --accept glossary TERM`."""
    problems = []
    english = {names[0]: definition for names, _, definition in zh.english_glossary_entries()}
    for term, state, entry in zh.glossary_states():
        if state == "untranslated":
            problems.append(f"{term}: no Chinese definition")
        elif state == "outdated":
            problems.append(f"{term}: the English definition changed since it was translated:\n"
                            + _diff(entry.get("en", ""), english[term]))
    unknown = sorted(set(zh.load_glossary_translation()) - set(english))
    problems += [f"{term}: not a term of glossary.md any more" for term in unknown]
    assert not problems, "zh/translations/glossary.yml:\n" + "\n\n".join(problems)


def test_chinese_glossary_keeps_every_english_entry_name_so_links_land_on_the_same_entry():
    """Chapters link glossary.md#term-<English term>; the Chinese glossary keeps the English
    names as its entries' names (the Chinese name and definition follow), so every anchor exists
    in both editions."""
    def names(text):
        body = text.split(":::{glossary}", 1)[1].split("\n:::", 1)[0]
        return [line for line in body.split("\n") if line and not line.startswith((" ", ":"))]
    english = names((ROOT / "glossary.md").read_text(encoding="utf-8"))
    chinese = names((zh.ZH / "glossary.md").read_text(encoding="utf-8"))
    assert chinese == english
