"""Generate the Chinese edition (zh/) from the English book and the translations.

    python zh/zh_edition.py                  write every generated file of zh/ (make book does this)
    python zh/zh_edition.py --check          list generated files that are out of date (exit 1 if any)
    python zh/zh_edition.py --status         per page: translated / untranslated / outdated Markdown cells
    python zh/zh_edition.py --scaffold PAGE  add the cells of PAGE (e.g. chapters/01_self_attention)
                                             that its translation file lacks, with empty "zh", and
                                             refresh the English of cells not translated yet
    python zh/zh_edition.py --accept PAGE [CELL_ID ...]
                                             after updating the Chinese of changed cells: record the
                                             current English text of those cells (all outdated ones
                                             if no id is given) as the text they translate;
                                             PAGE quizzes/NN: the same for a translated quiz;
                                             PAGE glossary: for glossary definitions (TERM ...);
                                             a code cell's id: for its code translation
    python zh/zh_edition.py --execute [PAGE ...]
                                             run the Chinese notebooks of pages with code
                                             translations (comments and strings in Chinese) and
                                             store their outputs: Chinese printed text and figures
    python zh/zh_edition.py --executed       list those notebooks
                                             (an exercise's translated cells that print are taken from
                                             a run too: --execute exercises/exNN_name/exNN_name)

What is generated, and from what (see zh/README.md):
* zh/<page>.ipynb for every notebook of _toc.yml: the English notebook with each Markdown cell
  replaced by its translation from zh/translations/<page>.json, when that translation was made
  from the English text the cell has now (its sha256 matches). Code cells, their outputs and
  metadata are the English ones, byte for byte, but for two generated changes (ZH_CODE_CHANGES):
  the exercises' checks cell asks for Chinese feedback, Notebook(tests_dir="tests",
  language="zh"), and the quiz cell fetches the Chinese quiz when it runs where only the notebook
  was downloaded (Colab). Untranslated or outdated Markdown cells are the English ones, and a
  note at the top of the page says how many there are. The quiz cell's stored output shows
  zh/chapters/quizzes/NN.json (translated quiz, or the English one until translated). Links to
  the published English book become links to the Chinese edition (zh_markdown).
  A page with code translations ("code" in its translation file) has those cells in Chinese
  (comments and strings only) and is executed in Chinese (see "Code cells in Chinese" below);
  an exercise is not: only its translated cells that print take their outputs from a Chinese run.
* zh/chapters/quizzes/NN.json, zh/glossary.md (the Chinese glossary: names from zh/terms.yml,
  definitions from zh/translations/glossary.yml), the exercise folders' files beside their
  notebooks, zh/_toc.yml, zh/_config.yml.
Hand-written: zh/intro.md, zh/notation.md (each names the sha256 of the English page it
translates in its first line), zh/errata.md, zh/translations/.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "zh"
TRANSLATIONS = ZH / "translations"

# Pages translated by hand as whole files: (English page, Chinese page).
HAND_TRANSLATED = {"intro": "intro.md", "notation": "notation.md"}
# Chinese-only pages, added to the table of contents under the last part.
ZH_ONLY_PAGES = ["errata"]
HASH_LINE = re.compile(r"^<!-- translated from (\S+) sha256:([0-9a-f]{64}) -->$")

CAPTIONS = {
    "Getting started": "入门",
    "Attention": "注意力",
    "The Transformer": "Transformer",
    "In practice": "实践",
    "Graded exercises": "评分练习",
    "Reference": "参考",
    "Language models": "语言模型",
    "Modern architectures": "现代架构",
    "From attention to a language model": "从注意力到语言模型",
}
TITLE = "多头注意力：可运行的教程"
AUTHOR = "MHA 课程编写组"
ZH_FOOTER = (
    '<p>代码（<code>mha</code> 包、测试、笔记本中的代码单元）：'
    '<a href="https://github.com/mha-course/multi-head-attention/blob/main/LICENSE">MIT 许可证</a>。'
    '文字与插图：<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>'
    '（<a href="https://github.com/mha-course/multi-head-attention/blob/main/LICENSE-CONTENT">LICENSE-CONTENT</a>）。</p>\n'
)

UNTRANSLATED_NOTE = (
    "> **尚未完全翻译（not fully translated yet）**：本页 {total} 段文字中有 {missing} 段还没有中文译文"
    "{outdated_part}，暂以英文原文显示。代码、输出与英文版完全相同。"
    "翻译方法见仓库中的 `zh/README.md`。"
)
NOTE_CELL_ID = "zh-translation-status"

# Where the book is published (the English edition at the root, the Chinese one in zh/, as
# `make book` lays out _build/html/ and _build/html/zh/). Links to the English pages written in
# the notebooks (e.g. an exercise's "This exercise goes with [Chapter 1](...)") go to the Chinese
# page instead.
PUBLISHED_BOOK = "https://mha-course.github.io/multi-head-attention/"
ENGLISH_PAGE_LINK = re.compile(re.escape(PUBLISHED_BOOK) + r"(?!zh/)(?=[\w.-])")

# The only differences between an English code cell and its Chinese copy: (English text, Chinese
# text, why). Each is a plain replacement of text that the cells of the English book contain.
ZH_CODE_CHANGES = [
    ('grader = Notebook(tests_dir="tests")',
     'grader = Notebook(tests_dir="tests", language="zh")',
     "the exercises' checks give their feedback in Chinese (mha/course/checks/)"),
    ('/main/chapters/" + quiz',
     '/main/zh/chapters/" + quiz',
     "the quiz cell, where only the notebook was downloaded (Colab), fetches the Chinese quiz"),
]
# A check cell of an exercise (`grader.check("q1")`): its stored output is the English feedback;
# the Chinese notebook shows what its checks cell (language="zh") prints instead.
CHECK_CELL = re.compile(r"\bgrader\.check\(")
QUIZ_JS = re.compile(r"^(var questions\w+=)(.*?)(;\n\nif \(typeof Question)", re.S)


# --------------------------------------------------------------------------------------
# The English book


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if isinstance(node.get("file"), str):
            files.append(node["file"])
        if isinstance(node.get("root"), str):
            files.append(node["root"])
        for value in node.values():
            if isinstance(value, (dict, list)):
                files += _toc_files(value)
    elif isinstance(node, list):
        for item in node:
            files += _toc_files(item)
    return files


def english_toc() -> dict:
    return yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def english_pages() -> list[str]:
    """Every page of the English table of contents, without suffix, in order."""
    return list(dict.fromkeys(_toc_files(english_toc())))


def notebook_pages() -> list[str]:
    return [p for p in english_pages() if (ROOT / f"{p}.ipynb").is_file()]


def cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


# --------------------------------------------------------------------------------------
# Translations


def translation_path(page: str) -> Path:
    return TRANSLATIONS / f"{page}.json"


def load_translation(page: str) -> dict:
    path = translation_path(page)
    if not path.is_file():
        return {"page": page, "cells": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def save_translation(page: str, data: dict) -> None:
    path = translation_path(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def markdown_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "markdown"]


def cell_states(page: str) -> list[tuple[str, str, dict | None]]:
    """(cell id, state, translation entry) for every Markdown cell of the English page;
    state is 'translated', 'untranslated' or 'outdated' (translated from other English)."""
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    entries = load_translation(page)["cells"]
    states = []
    for cell in markdown_cells(nb):
        entry = entries.get(cell["id"])
        if not entry or not entry.get("zh", "").strip():
            states.append((cell["id"], "untranslated", entry))
        elif entry.get("en_sha256") != text_hash(cell_text(cell)):
            states.append((cell["id"], "outdated", entry))
        else:
            states.append((cell["id"], "translated", entry))
    return states


# --------------------------------------------------------------------------------------
# Generation


def _quiz_file(nn: str) -> tuple[Path, Path]:
    return ROOT / "chapters" / "quizzes" / f"{nn}.json", TRANSLATIONS / "quizzes" / f"{nn}.json"


def zh_quiz(nn: str) -> list:
    """The Chinese quiz: its translation if made from the current English quiz, else English."""
    english_path, translated_path = _quiz_file(nn)
    english_text = english_path.read_text(encoding="utf-8")
    if translated_path.is_file():
        translated = json.loads(translated_path.read_text(encoding="utf-8"))
        if translated.get("en_sha256") == text_hash(english_text):
            return translated["zh"]
    return json.loads(english_text)


def zh_code(source: str) -> str:
    """The Chinese copy of an English code cell's source (ZH_CODE_CHANGES)."""
    for english, chinese, _ in ZH_CODE_CHANGES:
        source = source.replace(english, chinese)
    return source


def zh_markdown(text: str) -> str:
    """A Markdown cell as the Chinese edition shows it: links to the published English book
    go to the same page of the Chinese edition."""
    return ENGLISH_PAGE_LINK.sub(PUBLISHED_BOOK + "zh/", text)


def _with_zh_code(cell: dict) -> dict:
    source = cell_text(cell)
    if zh_code(source) == source:
        return cell
    return dict(cell, source=_lines(zh_code(source)))


def _with_zh_quiz(cell: dict) -> dict:
    match = re.search(r'quiz = "quizzes/(\d\d)\.json"', cell_text(cell))
    if not match or not _quiz_file(match.group(1))[0].is_file():
        return cell
    questions = json.dumps(zh_quiz(match.group(1)), ensure_ascii=False)
    cell = copy.deepcopy(cell)
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        js = data.get("application/javascript")
        if js is None:
            continue
        text = "".join(js) if isinstance(js, list) else js
        text = QUIZ_JS.sub(lambda m: m.group(1) + questions + m.group(3), text, count=1)
        data["application/javascript"] = text
    return cell


def _with_zh_check_output(cell: dict) -> dict:
    """A check cell with the output a run of the Chinese notebook shows: the stored English
    feedback translated by the checks' own texts and catalog (mha.course.checks.check_output_in,
    which fails on a text without a translation)."""
    from mha.course.checks import check_output_in

    cell = copy.deepcopy(cell)
    for out in cell.get("outputs", []):
        if out.get("output_type") in ("execute_result", "display_data") and "text/plain" in out.get("data", {}):
            out["data"] = {key: _lines(text) for key, text in check_output_in("zh", out["data"]).items()}
    return cell


# --------------------------------------------------------------------------------------
# Code cells in Chinese: comments and printed strings (issue 23)
#
# A translation file may also hold "code": {cell id: {"en_sha256", "en", "zh"}}: the whole code
# cell with its comments and string literals (titles, labels, printed text) in Chinese and
# nothing else changed (code_skeleton: tests/test_zh_edition.py checks it). A page with code
# translations is EXECUTED in Chinese (`--execute`), so its figures are drawn with Chinese
# labels: its first code cell after the Colab setup also calls plotting.use_language("zh")
# (ZH_LANGUAGE_LINES), and its outputs are those of that run, which the generator keeps as long
# as the code they came from is unchanged. tests/test_zh_edition.py checks that they show the
# English outputs' values, which nbval checks by running the English notebook.

ZH_LANGUAGE_LINES = (
    "from mha.course.plotting import use_language\n"
    "use_language(\"zh\")  # 图中的标题、坐标轴和图例用中文\n"
)
SETUP_HEADER = "# Setup: on Google Colab"


def code_translations(page: str) -> dict:
    return load_translation(page).get("code", {})


def executed_pages() -> list[str]:
    """Chapters whose Chinese notebook is executed (they have code translations). Exercises with
    code translations are not in this list: only their cells that print are taken from a Chinese
    run (below), and nbval runs every Chinese exercise anyway (`make notebooks`: zh/exercises)."""
    return [p for p in notebook_pages() if code_translations(p) and not is_exercise(p)]


def is_exercise(page: str) -> bool:
    return page.startswith("exercises/")


def code_states(page: str) -> list[tuple[str, str, dict]]:
    """(cell id, 'translated' | 'outdated' | 'missing', entry) for every code translation of page."""
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    english = {c["id"]: c for c in nb["cells"]}
    states = []
    for cid, entry in code_translations(page).items():
        cell = english.get(cid)
        if cell is None or cell["cell_type"] != "code":
            states.append((cid, "missing", entry))
        elif entry.get("en_sha256") != text_hash(cell_text(cell)):
            states.append((cid, "outdated", entry))
        else:
            states.append((cid, "translated", entry))
    return states


def code_skeleton(source: str) -> str:
    """The code without its comments and the text of its string literals: what a code
    translation must leave unchanged. (The fields of an f-string, {x:>8}, are code: kept.)
    IPython's magic and shell lines (``%matplotlib inline``, ``!pip ...``) are not Python:
    they are kept as they are, and parsed as ``pass``."""
    import ast

    lines = source.splitlines()
    magics = [line.strip() for line in lines if line.lstrip().startswith(("%", "!"))]
    source = "\n".join(line[:len(line) - len(line.lstrip())] + "pass"
                       if line.lstrip().startswith(("%", "!")) else line for line in lines)

    class _Blank(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.Constant(value="") if isinstance(node.value, str) else node

        def visit_JoinedStr(self, node):
            return ast.JoinedStr(values=[self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)])

    return "\n".join(magics + [ast.dump(_Blank().visit(ast.parse(source)))])


def _first_code_cell_id(nb: dict) -> str | None:
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and not cell_text(cell).startswith(SETUP_HEADER):
            return cell["id"]
    return None


def zh_code_source(page: str, cell: dict, first_code_id: str | None = None) -> str:
    """The source of the Chinese copy of an English code cell."""
    source = cell_text(cell)
    entries = code_translations(page)
    entry = entries.get(cell["id"])
    if entry and entry.get("zh", "").strip() and entry.get("en_sha256") == text_hash(source):
        source = entry["zh"]
    source = zh_code(source)
    if entries and cell["id"] == first_code_id and not is_exercise(page):
        source = with_zh_figures(source, draws=has_figure(cell))
    return source


# A figure's alt text (the code cell's metadata mystnb.image.alt, what a screen reader reads and
# what shows when the image does not load) is translated under "alt" in the translation file:
# {cell id: {"en_sha256", "en", "zh"}}, tied to the English alt text like a Markdown cell. The
# Chinese cell's metadata is the English one but for that text; an alt text whose English changed
# stays English until the translation is updated (tests/test_zh_edition.py fails meanwhile).


def figure_alt(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt")


def alt_translations(page: str) -> dict:
    return load_translation(page).get("alt", {})


def with_zh_alt(page: str, cell: dict) -> dict:
    """The code cell with its figure's alt text in Chinese, where a current translation exists."""
    english = figure_alt(cell)
    entry = alt_translations(page).get(cell["id"])
    if english is None or not entry or not entry.get("zh", "").strip() or entry.get("en_sha256") != text_hash(english):
        return cell
    cell = copy.deepcopy(cell)
    cell["metadata"]["mystnb"]["image"]["alt"] = entry["zh"]
    return cell


def has_figure(cell: dict) -> bool:
    return any("image/png" in output.get("data", {}) for output in cell.get("outputs", []))


def with_zh_figures(source: str, draws: bool) -> str:
    """The first code cell of a page executed in Chinese switches the figures to Chinese:
    after its own lines, or before them if the cell itself draws (chapter 7's diagram)."""
    if draws:
        return ZH_LANGUAGE_LINES + "\n" + source
    return source.rstrip("\n") + "\n\n" + ZH_LANGUAGE_LINES.rstrip("\n")


# Exercises (zh/exercises/): a code translation (comments, docstrings, printed text in Chinese)
# is used at once in a cell whose English run printed nothing (an answer cell, a cell that prints
# only once the learner's function returns something): the Chinese cell prints nothing either.
# A cell whose English run printed something shows the output of a Chinese run instead
# (`--execute exercises/exNN_name/exNN_name`), kept while its source is unchanged and while it
# shows the same values as the English output (the numbers outside the string literals: so a
# change of the English output, e.g. after `make exercises`, is noticed). Until then the cell is
# the English one, with its English output, and `--status` and tests/test_zh_edition.py say that
# it waits for a run. The check cells' outputs stay the English ones translated (above).

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _literal_numbers(source: str) -> "Counter[str]":
    import ast
    from collections import Counter

    numbers = Counter()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython's magics
        return numbers
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            numbers.update(NUMBER.findall(node.value))
    return numbers


def printed_values(cell: dict) -> tuple:
    """What a run of a code cell showed, but for the text of its string literals: the kind of
    each output, and the numbers in them (those written in the cell's strings left out)."""
    from collections import Counter

    kinds, numbers = [], Counter()
    for out in cell.get("outputs", []):
        kinds.append((out.get("output_type"), out.get("name"), sorted(out.get("data", {}))))
        texts = [out.get("text", "")] + [v for k, v in sorted(out.get("data", {}).items()) if k.startswith("text/")]
        for text in texts:
            numbers.update(NUMBER.findall(cell_text({"source": text})))
    return kinds, sorted((numbers - _literal_numbers(cell_text(cell))).elements())


def _chinese_run(cell: dict, source: str, before: dict | None) -> list | None:
    """The outputs of the Chinese run of an exercise's translated code cell, if it is current."""
    if before is None or cell_text(before) != source:
        return None
    ran = dict(cell, source=_lines(source), outputs=before.get("outputs", []))
    return ran["outputs"] if printed_values(ran) == printed_values(cell) else None


def _previous_code_cells(page: str) -> dict:
    path = ZH / f"{page}.ipynb"
    if not path.is_file():
        return {}
    return {c["id"]: c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"}


def waiting_for_run(page: str) -> list[str]:
    """The exercise's code cells with a current translation that are shown in English until
    `--execute PAGE` runs the Chinese notebook (their English run printed something)."""
    if not is_exercise(page) or not code_translations(page):
        return []
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    before = _previous_code_cells(page)
    waiting = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or not cell.get("outputs"):
            continue
        source = zh_code_source(page, cell)
        if source != zh_code(cell_text(cell)) and _chinese_run(cell, source, before.get(cell["id"])) is None:
            waiting.append(cell["id"])
    return waiting


def zh_notebook(page: str, run: bool = False) -> dict:
    """The Chinese notebook of page. run: the notebook to execute (every current code translation
    of an exercise in, whatever the outputs stored so far)."""
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    states = {cid: (state, entry) for cid, state, entry in cell_states(page)}
    exercise = is_exercise(page)
    executed = bool(code_translations(page)) and not exercise
    first_code_id = _first_code_cell_id(nb)
    # the outputs of the last Chinese run, by cell id, with the source they came from
    ran = _previous_code_cells(page) if executed or (exercise and code_translations(page)) else {}
    missing = outdated = 0
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            state, entry = states[cell["id"]]
            if state == "translated":
                cell = dict(cell, source=_lines(entry["zh"]))
            else:
                missing += 1
                outdated += state == "outdated"
            if zh_markdown(cell_text(cell)) != cell_text(cell):
                cell = dict(cell, source=_lines(zh_markdown(cell_text(cell))))
        elif cell["cell_type"] == "code":
            source = zh_code_source(page, cell, first_code_id)
            before = ran.get(cell["id"])
            if exercise and cell.get("outputs") and source != zh_code(cell_text(cell)) and not run:
                outputs = _chinese_run(cell, source, before)
                if outputs is not None:  # what the Chinese run of this very source printed
                    cell = dict(cell, source=_lines(source), outputs=outputs)
                else:  # not run in Chinese yet: the English cell (waiting_for_run)
                    source = zh_code(cell_text(cell))
            if exercise:
                if CHECK_CELL.search(cell_text(cell)):
                    cell = _with_zh_check_output(cell)
                if source != cell_text(cell):
                    cell = dict(cell, source=_lines(source))
            elif before is not None and cell_text(before) == source:
                # Executed in Chinese from this very source: keep what that run printed and drew.
                cell = dict(cell, source=_lines(source), outputs=before.get("outputs", []),
                            execution_count=before.get("execution_count"))
            else:
                if "display_quiz(" in cell_text(cell):
                    cell = _with_zh_quiz(cell)
                if source != cell_text(cell):
                    cell = dict(cell, source=_lines(source))
            cell = with_zh_alt(page, cell)
        cells.append(cell)
    if missing:
        outdated_part = f"（其中 {outdated} 段的英文原文已修改，译文待更新）" if outdated else ""
        note = UNTRANSLATED_NOTE.format(total=len(states), missing=missing, outdated_part=outdated_part)
        cells.insert(1 if cells and cells[0]["cell_type"] == "markdown" else 0,
                     {"cell_type": "markdown", "id": NOTE_CELL_ID, "metadata": {}, "source": _lines(note)})
    nb["cells"] = cells
    return nb


def execute_zh_notebook(page: str, timeout: int = 600) -> Path:
    """Run the Chinese notebook of page (in its folder, as Jupyter does) and store its outputs,
    under the CPU kernels `make record` records the page under (the root conftest.py's
    ``recording_kernels``: plain code for a chapter that asks for it, else the machine's own)."""
    import os

    import nbformat
    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT))
    from conftest import KERNEL_VARIABLES, recording_kernels

    nb_dict = zh_notebook(page, run=True)
    path = ZH / f"{page}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.reads(json.dumps(nb_dict), as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute(
        env={k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES} | recording_kernels(ROOT / f"{page}.ipynb"))
    outputs = {c["id"]: c for c in nb["cells"] if c["cell_type"] == "code"}
    for cell in nb_dict["cells"]:
        if cell["cell_type"] == "code":
            ran_cell = json.loads(nbformat.writes(nbformat.from_dict({
                "cells": [outputs[cell["id"]]], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})))["cells"][0]
            cell["outputs"] = ran_cell.get("outputs", [])
            cell["execution_count"] = ran_cell.get("execution_count")
    path.write_bytes(notebook_bytes(nb_dict))
    if is_exercise(page):  # keep only what the translated cells printed (zh_notebook)
        path.write_bytes(notebook_bytes(zh_notebook(page)))
    return path


def notebook_bytes(nb: dict) -> bytes:
    # The layout nbformat writes (so that saving in Jupyter changes nothing needlessly).
    return (json.dumps(nb, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


GLOSSARY_TRANSLATION = TRANSLATIONS / "glossary.yml"
GLOSSARY_INTRO = """# 术语表 · Glossary

本课程用到的每个技术术语都列在这里：先是英文原文，然后是中文名和中文释义。中文名取中文教材和论文最常用的译法；中文写作中通常保留英文原名的（softmax、Transformer、logits），这里也保留。全书每个术语只用这一个译名（译名表是仓库中的 `zh/terms.yml`，`tests/test_zh_terms.py` 检查每一页都用它）。

各章第一次使用某个术语时都链接到这里。zh.d2l.ai（《动手学深度学习》中文版）的译名与本书不同时，条目中注明。

| 符号 | 含义 | English |
|---|---|---|
"""
GLOSSARY_UNTRANSLATED = "*（此条尚无中文释义，暂以英文原文显示。）*"


def load_glossary_translation() -> dict:
    """{term: {en_sha256, en, zh}}: the Chinese definitions of the glossary's entries."""
    if not GLOSSARY_TRANSLATION.is_file():
        return {}
    return yaml.safe_load(GLOSSARY_TRANSLATION.read_text(encoding="utf-8")) or {}


class _BlockDumper(yaml.SafeDumper):
    pass


_BlockDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def save_glossary_translation(data: dict) -> None:
    header = ("# The Chinese definitions of the glossary's entries (zh/README.md): per term of glossary.md,\n"
              "# the sha256 of the English definition translated, that English, and the Chinese (one line).\n"
              "# The Chinese NAME of each term is not here: it is zh/terms.yml's.\n")
    GLOSSARY_TRANSLATION.write_text(header + yaml.dump(data, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False,
                                                       width=1000), encoding="utf-8")


def glossary_states() -> list[tuple[str, str, dict | None]]:
    """(term, 'translated' | 'untranslated' | 'outdated', entry) for every entry of glossary.md."""
    translations = load_glossary_translation()
    states = []
    for names, _, definition in english_glossary_entries():
        entry = translations.get(names[0])
        if not entry or not entry.get("zh", "").strip():
            states.append((names[0], "untranslated", entry))
        elif entry.get("en_sha256") != text_hash(definition):
            states.append((names[0], "outdated", entry))
        else:
            states.append((names[0], "translated", entry))
    return states


def zh_term_heading(row: dict) -> str:
    """**注意力**（又称注意力机制）: the Chinese name and the other names. The English name is the
    entry's name, shown above it (and its anchor, as in the English glossary)."""
    extra = []
    also = [n for n in row.get("also", []) if n not in row["en"]]
    if also:
        extra.append("又称" + "、".join(also))
    if row.get("d2l"):
        extra.append("zh.d2l.ai：" + "、".join(row["d2l"]))
    return f"**{row['zh']}**" + (f"（{'；'.join(extra)}）" if extra else "")


def zh_glossary() -> str:
    """The Chinese glossary: Chinese names from zh/terms.yml, Chinese definitions from
    zh/translations/glossary.yml, the English terms as the entries' names, so that every
    glossary.md#term-<term> link of a chapter lands on the same entry as in English."""
    english = (ROOT / "glossary.md").read_text(encoding="utf-8")
    terms = {en: row for row in load_terms() for en in row["en"]}
    out = [GLOSSARY_INTRO]
    for line in english.split(":::{glossary}", 1)[0].split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("$"):
            out.append(f"| {cells[0]} | {cells[2]} | {cells[1]} |\n")
    out.append(zh_glossary_index(terms))
    out.append("\n:::{glossary}\n:sorted:\n")
    states = {term: (state, entry) for term, state, entry in glossary_states()}
    for names, chinese, definition in english_glossary_entries():
        row = terms.get(names[0])
        state, entry = states[names[0]]
        heading = zh_term_heading(row) if row else f"**{chinese}**"
        body = entry["zh"].strip() if state == "translated" else GLOSSARY_UNTRANSLATED + "\n\n" + definition
        indented = "\n".join("  " + l if l.strip() else "" for l in body.split("\n"))
        out.append("\n" + "\n".join(names) + f"\n  {heading}\n\n{indented}\n")
    out.append(":::\n")
    return "".join(out)


def zh_glossary_index(terms: dict) -> str:
    """The index by Chinese name (issue 32.8): a reader who knows only 层归一化 finds its entry.
    Every entry under its Chinese name, in pinyin order (zh/terms.yml's `pinyin`), grouped by the
    first letter, each a link to the entry (the entries themselves stay under their English names,
    so that every glossary.md#term-... link lands on the same entry in both editions)."""
    import itertools

    rows = []
    for names, chinese, _ in english_glossary_entries():
        row = terms.get(names[0], {})
        name = row.get("zh", chinese)
        rows.append((row.get("pinyin", name).lower(), name, names[0]))
    rows.sort()
    out = ["\n## 按中文名称查找\n\n按汉语拼音排序；点击名称即跳到下方的条目（条目按英文名称排序）。\n"]
    for letter, group in itertools.groupby(rows, key=lambda r: r[0][:1].upper()):
        links = " · ".join(f"{{term}}`{name} <{target}>`" for _, name, target in group)
        out.append(f"\n**{letter}**　{links}\n")
    return "".join(out) + "\n## 条目\n"


TERMS_FILE = ZH / "terms.yml"
# The names of glossary.md's symbol table that are terms of zh/terms.yml: (symbol, meaning).
SYMBOL_TERMS = {"$B$": "batch size"}


def load_terms() -> list[dict]:
    """The term table (zh/terms.yml): the one Chinese name of every glossary term."""
    return yaml.safe_load(TERMS_FILE.read_text(encoding="utf-8"))


def glossary_symbol_names() -> list[tuple[list[str], str, str]]:
    """([meaning], Chinese, symbol) for the rows of glossary.md's symbol table that name a term."""
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    rows = []
    for line in text.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in SYMBOL_TERMS:
            rows.append(([SYMBOL_TERMS[cells[0]]], cells[2], cells[0]))
    return rows


def english_glossary_entries() -> list[tuple[list[str], str, str]]:
    """(term names, bold Chinese name, English definition) of every entry of glossary.md."""
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    body = text.split(":::{glossary}\n", 1)[1].split("\n:::", 1)[0]
    entries, names, lines = [], [], []
    for line in body.split("\n"):
        if line.startswith(":"):
            continue
        if line and not line.startswith(" "):
            if lines:
                entries.append((names, lines))
                names, lines = [], []
            names.append(line.strip())
        elif names:
            lines.append(line)
    if names:
        entries.append((names, lines))
    result = []
    for names, lines in entries:
        definition = "\n".join(l[2:] if l.startswith("  ") else l for l in lines).strip()
        bold = re.match(r"\*\*(.+?)\*\*\s*", definition)
        chinese = bold.group(1) if bold else ""
        result.append((names, chinese, definition[bold.end():].strip() if bold else definition))
    return result


def zh_toc() -> dict:
    toc = copy.deepcopy(english_toc())
    for part in toc.get("parts", []):
        if part.get("caption") in CAPTIONS:
            part["caption"] = CAPTIONS[part["caption"]]
    if toc.get("parts"):
        toc["parts"][-1]["chapters"] += [{"file": page} for page in ZH_ONLY_PAGES]
    return toc


def zh_config() -> dict:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = TITLE
    config["author"] = AUTHOR
    config["logo"] = "../" + config["logo"]
    config["html"]["favicon"] = "../" + config["html"]["favicon"]
    config["repository"]["path_to_book"] = "zh"
    config["html"]["extra_footer"] = ZH_FOOTER
    config["exclude_patterns"] = [p for p in config.get("exclude_patterns", []) if p not in {"zh", "_templates"}] + [
        "translations", "*.py", "**/tests"]
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {name: "../_ext/" for name in sphinx.get("local_extensions", {})}
    # The interface in Chinese (locales/zh_CN/) and the search that segments Chinese queries.
    sphinx["local_extensions"]["zh_interface"] = "../_ext/"
    sphinx.setdefault("config", {})
    sphinx["config"].update({
        "language": "zh_CN",
        "course_edition": "zh",
        "course_other_edition": "..",
        "course_other_edition_url": "../",
        "locale_dirs": ["locales"],
    })
    return config


def _yaml(data: dict, what: str) -> bytes:
    header = (f"# GENERATED by zh/zh_edition.py from {what}: do not edit; edit the English file\n"
              "# (or zh/zh_edition.py) and run `make book`.\n")
    return (header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)).encode("utf-8")


def exercise_support_files() -> dict[Path, Path]:
    """Files beside each exercise notebook (its public tests), copied beside the Chinese one."""
    files = {}
    for page in notebook_pages():
        if not page.startswith("exercises/"):
            continue
        folder = (ROOT / page).parent
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix != ".ipynb" and "__pycache__" not in path.parts \
                    and ".ipynb_checkpoints" not in path.parts:
                files[ZH / path.relative_to(ROOT)] = path
    return files


def generated_files() -> dict[Path, bytes]:
    """Every generated file of zh/ with the bytes it must hold."""
    files: dict[Path, bytes] = {}
    for page in notebook_pages():
        files[ZH / f"{page}.ipynb"] = notebook_bytes(zh_notebook(page))
    for path in sorted((ROOT / "chapters" / "quizzes").glob("*.json")):
        files[ZH / "chapters" / "quizzes" / path.name] = (
            json.dumps(zh_quiz(path.stem), ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    if (ROOT / "glossary.md").is_file():
        files[ZH / "glossary.md"] = zh_glossary().encode("utf-8")
    for target, source in exercise_support_files().items():
        files[target] = source.read_bytes()
    files[ZH / "_toc.yml"] = _yaml(zh_toc(), "_toc.yml")
    files[ZH / "_config.yml"] = _yaml(zh_config(), "_config.yml")
    return files


def stale_generated_files() -> list[Path]:
    return [p for p, data in generated_files().items() if not p.is_file() or p.read_bytes() != data]


def orphan_generated_files() -> list[Path]:
    """Generated-looking files of zh/ that nothing generates any more (a page was removed)."""
    wanted = set(generated_files())
    found = [p for p in ZH.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    found += list((ZH / "chapters" / "quizzes").glob("*.json"))
    return sorted(p for p in found if p not in wanted)


def write_all() -> list[Path]:
    written = []
    for path, data in generated_files().items():
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    for path in orphan_generated_files():
        path.unlink()
        written.append(path)
    return written


# --------------------------------------------------------------------------------------
# Hand-translated pages


def hand_translation_state(page: str) -> tuple[str, str]:
    """('translated' | 'outdated' | 'missing' | 'malformed', detail) for a whole-page translation."""
    zh_path = ZH / HAND_TRANSLATED[page]
    english = ROOT / f"{page}.md"
    if not zh_path.is_file():
        return "missing", f"zh/{HAND_TRANSLATED[page]} does not exist"
    first = zh_path.read_text(encoding="utf-8").split("\n", 1)[0]
    match = HASH_LINE.match(first)
    if not match or match.group(1) != f"{page}.md":
        return "malformed", f"zh/{HAND_TRANSLATED[page]}: first line must be <!-- translated from {page}.md sha256:... -->"
    if match.group(2) != text_hash(english.read_text(encoding="utf-8")):
        return "outdated", f"{page}.md changed since zh/{HAND_TRANSLATED[page]} was translated"
    return "translated", ""


def hand_translation_header(page: str) -> str:
    english = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    return f"<!-- translated from {page}.md sha256:{text_hash(english)} -->"


# --------------------------------------------------------------------------------------
# Command line


def _status() -> int:
    total = done = 0
    for page in notebook_pages():
        states = [s for _, s, _ in cell_states(page)]
        t, u, o = states.count("translated"), states.count("untranslated"), states.count("outdated")
        total += len(states)
        done += t
        print(f"{page:55s} {t:3d} translated {u:3d} untranslated {o:3d} outdated")
    for page in HAND_TRANSLATED:
        print(f"{page + '.md':55s} {hand_translation_state(page)[0]}")
    states = [s for _, s, _ in glossary_states()]
    print(f"{'glossary (zh/translations/glossary.yml)':55s} {states.count('translated'):3d} translated "
          f"{states.count('untranslated'):3d} untranslated {states.count('outdated'):3d} outdated")
    names = {en for row in load_terms() for en in row["en"]}
    for names_, _, _ in english_glossary_entries():
        if names_[0] not in names:
            print(f"glossary term without a Chinese name in zh/terms.yml: {names_[0]!r}")
    for part in english_toc().get("parts", []):
        if part.get("caption") not in CAPTIONS:
            print(f"_toc.yml caption without a translation in zh_edition.CAPTIONS: {part.get('caption')!r}")
    for page in notebook_pages():
        if not code_translations(page):
            continue
        states = [s for _, s, _ in code_states(page)]
        how = f"{len(waiting_for_run(page)):3d} waiting for --execute" if is_exercise(page) else "(executed in Chinese)"
        print(f"{page:55s} {states.count('translated'):3d} code cells translated "
              f"{len(states) - states.count('translated'):3d} outdated {how}")
    print(f"Markdown cells translated: {done} of {total}")
    return 0


def _scaffold(page: str) -> int:
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    data = load_translation(page)
    data["page"] = page
    added = 0
    for cell in markdown_cells(nb):
        text = cell_text(cell)
        entry = data["cells"].get(cell["id"])
        if entry is None:
            data["cells"][cell["id"]] = {"en_sha256": text_hash(text), "en": text, "zh": ""}
            added += 1
        elif not entry.get("zh", "").strip():
            # Not translated yet: show the translator the English as it is now.
            entry.update(en_sha256=text_hash(text), en=text)
    # Keep the English order, so that translators read the page top to bottom.
    order = [c["id"] for c in markdown_cells(nb)]
    data["cells"] = {cid: data["cells"][cid] for cid in order if cid in data["cells"]} | {
        cid: e for cid, e in data["cells"].items() if cid not in order}
    save_translation(page, data)
    print(f"{translation_path(page).relative_to(ROOT)}: {added} cells added")
    return 0


def quiz_translation_problems(nn: str) -> list[str]:
    """Why zh/translations/quizzes/NN.json does not (or no longer) translate chapters/quizzes/NN.json."""
    english_path, translated_path = _quiz_file(nn)
    if not translated_path.is_file():
        return []
    english_text = english_path.read_text(encoding="utf-8") if english_path.is_file() else ""
    if not english_text:
        return [f"zh/translations/quizzes/{nn}.json: no English chapters/quizzes/{nn}.json"]
    translated = json.loads(translated_path.read_text(encoding="utf-8"))
    problems = []
    if translated.get("en_sha256") != text_hash(english_text):
        problems.append(f"chapters/quizzes/{nn}.json changed since it was translated")
    english = json.loads(english_text)
    if len(translated.get("zh", [])) != len(english):
        problems.append(f"{len(translated.get('zh', []))} translated questions, {len(english)} English")
    for i, (en_q, zh_q) in enumerate(zip(english, translated.get("zh", [])), 1):
        keep = [(a.get("correct"), a.get("value"), a.get("type")) for a in en_q["answers"]]
        got = [(a.get("correct"), a.get("value"), a.get("type")) for a in zh_q.get("answers", [])]
        if en_q["type"] != zh_q.get("type") or keep != got or en_q.get("precision") != zh_q.get("precision"):
            problems.append(f"question {i}: type, answers' correctness, values or precision differ from English")
    return problems


def _accept(page: str, ids: list[str]) -> int:
    if page == "glossary":
        data = load_glossary_translation()
        english = {names[0]: definition for names, _, definition in english_glossary_entries()}
        targets = ids or [t for t, state, _ in glossary_states() if state == "outdated"]
        for term in targets:
            entry = data.setdefault(term, {"zh": ""})
            entry.update(en_sha256=text_hash(english[term]), en=english[term], zh=entry.get("zh", ""))
            print(f"glossary {term}: now translates the current English definition")
        save_glossary_translation(data)
        return 0
    if page.startswith("quizzes/"):
        nn = page.removeprefix("quizzes/")
        english_path, translated_path = _quiz_file(nn)
        data = json.loads(translated_path.read_text(encoding="utf-8"))
        data["en_sha256"] = text_hash(english_path.read_text(encoding="utf-8"))
        translated_path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"zh/translations/quizzes/{nn}.json now translates the current chapters/quizzes/{nn}.json")
        return 0
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    english = {c["id"]: cell_text(c) for c in markdown_cells(nb)}
    code = {c["id"]: cell_text(c) for c in nb["cells"] if c["cell_type"] == "code"}
    data = load_translation(page)
    targets = ids or [cid for cid, state, _ in cell_states(page) if state == "outdated"]
    # Code translations: after updating the Chinese code of a changed cell (then --execute PAGE).
    for cid in ids or [cid for cid, state, _ in code_states(page) if state == "outdated"]:
        if cid in code and cid in data.get("code", {}):
            data["code"][cid].update(en_sha256=text_hash(code[cid]), en=code[cid])
            print(f"{page} {cid}: the code translation now translates the current English code")
    # Alt texts of figures: after updating the Chinese of a changed one.
    alts = {c["id"]: figure_alt(c) for c in nb["cells"] if c["cell_type"] == "code" and figure_alt(c)}
    for cid in ids or [cid for cid, entry in data.get("alt", {}).items()
                       if cid in alts and entry.get("en_sha256") != text_hash(alts[cid])]:
        if cid in alts and cid in data.get("alt", {}):
            data["alt"][cid].update(en_sha256=text_hash(alts[cid]), en=alts[cid])
            print(f"{page} {cid}: the alt text's translation now translates the current English alt text")
    targets = [cid for cid in targets if not (cid in code and (cid in data.get("code", {}) or cid in data.get("alt", {})))]
    for cid in targets:
        if cid not in english:
            print(f"{page}: no Markdown cell {cid}", file=sys.stderr)
            return 1
        entry = data["cells"].setdefault(cid, {"zh": ""})
        entry["en_sha256"] = text_hash(english[cid])
        entry["en"] = english[cid]
        print(f"{page} {cid}: now translates the current English text")
    save_translation(page, data)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true")
    group.add_argument("--status", action="store_true")
    group.add_argument("--scaffold", metavar="PAGE")
    group.add_argument("--accept", nargs="+", metavar=("PAGE", "CELL_ID"))
    group.add_argument("--execute", nargs="*", metavar="PAGE",
                       help="run the Chinese notebooks of these pages (default: every chapter with code "
                            "translations, and the exercises with cells waiting for a run) and keep their outputs")
    group.add_argument("--executed", action="store_true",
                       help="print the Chinese notebooks that are executed in Chinese")
    args = parser.parse_args(argv)
    if args.status:
        return _status()
    if args.executed:
        for page in executed_pages():
            print(f"zh/{page}.ipynb")
        return 0
    if args.execute is not None:
        write_all()
        pages = args.execute or executed_pages() + [p for p in notebook_pages() if waiting_for_run(p)]
        for page in pages:
            print(f"executed {execute_zh_notebook(page).relative_to(ROOT)}")
        return 0
    if args.scaffold:
        return _scaffold(args.scaffold)
    if args.accept:
        return _accept(args.accept[0], args.accept[1:])
    if args.check:
        stale = stale_generated_files() + orphan_generated_files()
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path in write_all():
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
