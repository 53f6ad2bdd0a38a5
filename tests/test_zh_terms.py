"""One term, one translation (issue 23): every Chinese page names a concept the way the glossary does.

zh/terms.yml is the one source of each term's Chinese name (zh/glossary.md is built from it).
These tests read every Chinese page (the Markdown of zh/translations/**, the translated quizzes,
and the hand-written zh/*.md pages) and fail, naming the page, the cell and the words around it,
when a page

* uses another rendering of a listed term (a row's `variants`, e.g. 批大小 for 批量大小), or the
  zh.d2l.ai rendering (`d2l`) outside a note that names zh.d2l.ai;
* writes a term in English where the table has a Chinese name (词元, not token), except in code,
  math and link targets, and in parentheses beside the Chinese at first use: 词元（token）;
* uses a listed variant of a recurring word that is not a glossary term (zh/phrases.yml: 单元 for a
  notebook's cell, 自测 for "Check your understanding"; issue 32.8).

A rendering still used on pages translated elsewhere is listed as `pending` (zh/terms.yml,
zh/phrases.yml): an xfail that passes (XPASS) once no page uses it any more: then move it to `variants`.
The Chinese glossary also has an index by Chinese name in pinyin order (`pinyin` of zh/terms.yml).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "zh"))

import zh_edition as zh  # noqa: E402

TERMS = zh.load_terms()
PHRASES = yaml.safe_load((zh.ZH / "phrases.yml").read_text(encoding="utf-8"))
HAND_WRITTEN = sorted(p for p in zh.ZH.glob("*.md") if p.name not in {"README.md", "glossary.md"})

# What is not prose: fenced code, inline code, display and inline math, link targets, HTML tags,
# URLs, MyST directive/role names. Replaced by a space, so the words around them stay apart.
NOT_PROSE = re.compile(
    r"```.*?```|~~~.*?~~~|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$|\\\(.*?\\\)"
    r"|\]\([^)\s]*\)|<[^>\n]*>|https?://\S+|\{[\w:-]+\}",
    re.S,
)
# Parentheses beside Chinese text, 词元（token）, (innermost first, so nested ones go too) and
# quotations (“当前 Decoder 块”: the notes' own words).
PARENTHESES = re.compile(r"（[^（）]*）|\([^()]*\)|“[^“”]*”")
D2L_NOTE = re.compile(r"[（(][^（）()]*d2l[^（）()]*[）)]|zh\.d2l\.ai\s*(?:称|作|译作|写作|用)[^，。；、）)\s]*")


def prose(text: str) -> str:
    return NOT_PROSE.sub(" ", text)


def chinese_pages() -> dict[str, str]:
    """{where: text} for every piece of Chinese prose of the Chinese edition."""
    pages = {}
    for path in sorted(zh.TRANSLATIONS.rglob("*.json")):
        where = path.relative_to(ROOT).as_posix()
        data = json.loads(path.read_text(encoding="utf-8"))
        if "cells" in data:
            for cell_id, entry in data["cells"].items():
                if entry.get("zh", "").strip():
                    pages[f"{where} cell {cell_id}"] = entry["zh"]
        elif path.parent.name == "quizzes":
            for i, question in enumerate(data.get("zh", []), 1):
                texts = [question.get("question", "")] + [
                    a.get(k, "") for a in question.get("answers", []) for k in ("answer", "feedback")
                    if isinstance(a.get(k), str)]
                pages[f"{where} question {i}"] = "\n".join(texts)
        for cell_id, entry in data.get("alt", {}).items():  # figures' alt texts
            pages[f"{where} alt text of cell {cell_id}"] = entry.get("zh", "")
    for term, entry in zh.load_glossary_translation().items():
        pages[f"{zh.GLOSSARY_TRANSLATION.relative_to(ROOT).as_posix()} term {term}"] = entry.get("zh", "")
    for path in HAND_WRITTEN:
        pages[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return pages


def _context(text: str, start: int, end: int) -> str:
    return text[max(0, start - 25):end + 25].replace("\n", " ")


def _without_accepted_names(text: str) -> str:
    """Hide every accepted name (zh, also) that contains a listed variant, so that the variant
    inside it is no hit (头维度 inside 单头维度)."""
    flagged = [v for t in TERMS + PHRASES for v in [*t.get("variants", []), *t.get("d2l", [])]]
    names = sorted({n for t in TERMS + PHRASES for n in [t["zh"], *t.get("also", [])]
                    if any(v in n and v != n for v in flagged)}, key=len, reverse=True)
    for name in names:
        text = text.replace(name, "□" * len(name))
    return text


def _name(row: dict) -> str:
    return row["en"][0] if isinstance(row["en"], list) else row["en"]


def variant_hits(text: str) -> list[str]:
    """'variant -> canonical: context' for every other rendering of a listed term in text."""
    text = _without_accepted_names(prose(text))
    without_d2l_notes = D2L_NOTE.sub(lambda m: " " * len(m.group(0)), text)
    hits = []
    for term in TERMS + PHRASES:
        for variant in term.get("variants", []):
            hits += [f"{variant} -> {term['zh']} ({_name(term)}): ...{_context(text, m.start(), m.end())}..."
                     for m in re.finditer(re.escape(variant), text)]
        for variant in term.get("d2l", []):
            hits += [f"{variant} (zh.d2l.ai) -> {term['zh']} ({term['en'][0]}): "
                     f"...{_context(without_d2l_notes, m.start(), m.end())}..."
                     for m in re.finditer(re.escape(variant), without_d2l_notes)]
    return hits


def english_hits(text: str) -> list[str]:
    """'English -> Chinese: context' for every term written in English outside code, math, links
    and parentheses."""
    text = prose(text)
    while PARENTHESES.search(text):
        text = PARENTHESES.sub(lambda m: " " * len(m.group(0)), text)
    hits = []
    for term in TERMS:
        for english in term.get("english", term["en"]):
            pattern = re.compile(r"(?<![\w.-])" + re.escape(english).replace(r"\ ", r"[\s-]+") + r"(?![\w-])", re.I)
            hits += [f"{english} -> {term['zh']}: ...{_context(text, m.start(), m.end())}..."
                     for m in pattern.finditer(text)]
    return hits


PAGES = chinese_pages()


def test_every_glossary_term_has_one_chinese_name():
    table = {en: t for t in TERMS for en in t["en"]}
    problems = []
    for names, chinese, _ in zh.english_glossary_entries() + zh.glossary_symbol_names():
        for en in names:
            if en not in table:
                problems.append(f"{en}: no row in zh/terms.yml")
        row = table.get(names[0])
        if row and not chinese.startswith(row["zh"]):
            problems.append(f"{names[0]}: glossary.md names it **{chinese}**, zh/terms.yml {row['zh']}")
    unused = [t["en"] for t in TERMS if not any(t["en"][0] == names[0] for names, _, _ in
                                                 zh.english_glossary_entries() + zh.glossary_symbol_names())]
    assert not problems and not unused, "\n".join(problems + [f"{u}: not a term of glossary.md" for u in unused])


def test_no_two_rows_claim_the_same_rendering():
    seen = {}
    for term in TERMS:
        for name in [term["zh"], *term.get("variants", []), *term.get("d2l", [])]:
            assert seen.setdefault(name, term["en"][0]) == term["en"][0], f"{name}: {seen[name]} and {term['en'][0]}"


@pytest.mark.parametrize("where", sorted(PAGES))
def test_page_uses_the_glossary_rendering_of_every_term(where):
    hits = variant_hits(PAGES[where])
    assert not hits, f"{where}: another rendering than the glossary's (zh/terms.yml):\n" + "\n".join(hits)


@pytest.mark.parametrize("where", sorted(PAGES))
def test_page_writes_terms_in_chinese(where):
    hits = english_hits(PAGES[where])
    assert not hits, (f"{where}: a term in English where the glossary has a Chinese name; write the Chinese, "
                      f"with the English in parentheses at first use (词元（token）):\n" + "\n".join(hits))


def test_the_checks_find_a_planted_drift():
    """The scanners themselves: each kind of drift is found, and what is allowed is not flagged."""
    assert variant_hits("每个头的头维度为 16。") and not variant_hits("每个头的单头维度为 16。")
    assert variant_hits("批大小为 4") and not variant_hits("批量大小为 4")
    assert variant_hits("用丢弃法以外的随机失活") and not variant_hits("暂退法（dropout）")
    assert variant_hits("层规范化") and not variant_hits("层归一化（zh.d2l.ai：层规范化）")
    assert not variant_hits("贪心解码（greedy decoding，zh.d2l.ai 称贪心搜索）")
    assert english_hits("每个 token 都有一个向量") and not english_hits("每个词元（token）都有一个向量")
    assert not english_hits("调用 `beam_search` 做束搜索，见 [束搜索](../glossary.md#term-beam-search)")
    assert not english_hits("$\\text{tokens}$ 与 ```python\nbeam search\n```")


PENDING = [(row["zh"], variant) for row in TERMS + PHRASES for variant in row.get("pending", [])]


@pytest.mark.xfail(strict=False, reason="still used on pages translated elsewhere (zh/phrases.yml: pending)")
@pytest.mark.parametrize("canonical, variant", PENDING, ids=[v for _, v in PENDING])
def test_a_pending_rendering_is_gone_from_every_page(canonical, variant):
    """XPASS (an X in the summary, -rX) when no page uses the pending rendering any more: then move it
    to `variants`. Not strict: the pages are fixed and committed by their own translators."""
    pages = [where for where, text in PAGES.items() if variant in _without_accepted_names(prose(text))]
    assert not pages, f"{variant} (write {canonical}) is still used on: {pages}"


def test_one_rendering_per_phrase_and_a_variant_of_one_is_found():
    assert variant_hits("RoPE 的半旋转布局") and not variant_hits("RoPE 的旋转一半布局")
    assert variant_hits("[logits](../glossary.md#term-logits)（对数几率）")
    assert variant_hits("用小批量训练") and not variant_hits("用批量训练")
    assert variant_hits("## 检验你的理解") and not variant_hits("## 自测")
    seen = {}
    for row in TERMS + PHRASES:
        for name in [row["zh"], *row.get("variants", []), *row.get("pending", [])]:
            assert seen.setdefault(name, _name(row)) == _name(row), f"{name}: {seen[name]} and {_name(row)}"


HAN = re.compile(r"[\u4e00-\u9fff]")


def test_every_chinese_name_has_its_pinyin_for_the_index():
    """The Chinese glossary's index by Chinese name is in pinyin order: every name with Han
    characters gives its pinyin, one syllable per Han character (Latin parts as written)."""
    problems = []
    for row in TERMS:
        if not HAN.search(row["zh"]):
            continue
        syllables = row.get("pinyin", "").split()
        han = len(HAN.findall(row["zh"]))
        latin = len(re.findall(r"[A-Za-z0-9]+", row["zh"]))
        if len(syllables) != han + latin or not all(re.fullmatch(r"[a-z0-9]+", s) for s in syllables):
            problems.append(f"{row['en'][0]} ({row['zh']}): pinyin {row.get('pinyin')!r}")
    assert not problems, "zh/terms.yml: add `pinyin:` (toneless, syllables apart):\n" + "\n".join(problems)


def test_chinese_glossary_has_an_index_by_chinese_name_in_pinyin_order():
    """A reader who knows only the Chinese name finds the entry: zh/glossary.md lists every entry
    by its Chinese name, in pinyin order, each linked to the entry (its English anchor)."""
    text = zh.zh_glossary()
    index = text.split("\n## 按中文名称查找", 1)[1].split(":::{glossary}", 1)[0]
    links = re.findall(r"\{term\}`([^`<]+) <([^`>]+)>`", index)
    entries = [names[0] for names, _, _ in zh.english_glossary_entries()]
    assert sorted(target for _, target in links) == sorted(entries)
    rows = {row["en"][0]: row for row in TERMS}
    named = [(name, rows[target]) for name, target in links if target in rows]  # a row missing: test above
    keys = [row.get("pinyin", row["zh"]).lower() for _, row in named]
    assert keys == sorted(keys)
    assert [name for name, _ in named] == [row["zh"] for _, row in named]
