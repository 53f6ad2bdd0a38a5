"""The Chinese edition's search index keeps the glossary's terms whole (issue 32, item 6).

_ext/zh_interface.py writes the glossary's Chinese terms (zh/terms.yml) as a jieba user
dictionary and hands it to Sphinx's Chinese search (html_search_options["dict"]). These tests
split text the way the build does, with Sphinx's own SearchChinese and that dictionary, without
building the book; tests/browser/test_zh_search.py checks the ranking in the built book.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import zh_interface  # noqa: E402

pytest.importorskip("jieba")


@pytest.fixture(scope="module")
def chinese_search(tmp_path_factory):
    """Sphinx's Chinese search language, set up as the Chinese edition's build sets it up."""
    from sphinx.search.zh import SearchChinese

    words = zh_interface.glossary_words()
    dictionary = zh_interface.search_dictionary(tmp_path_factory.mktemp("jieba") / "words.txt", words)
    return SearchChinese({"dict": str(dictionary)})


def indexed_words(search, text: str) -> set[str]:
    """The words Sphinx's index lists a page with `text` under (its split and filter)."""
    return {word for word in search.split(text) if search.word_filter(word)}


@pytest.mark.parametrize("term", ["自注意力", "多头注意力", "层归一化", "位置编码", "批量归一化", "因果掩码", "束搜索"])
def test_a_glossary_term_is_a_word_of_the_dictionary(term):
    assert term in zh_interface.glossary_words()


def test_a_phrase_of_the_glossary_is_not_one_word():
    # FlashAttention（IO 感知的精确注意力算法）and 起始符与结束符 are phrases, not words
    words = zh_interface.glossary_words()
    assert not [w for w in words if any(particle in w for particle in "的与和")]


def test_a_term_that_holds_another_term_is_left_to_be_cut_into_it():
    words = zh_interface.glossary_words()
    assert "位置编码" in words and "旋转位置编码" not in words


@pytest.mark.parametrize(("sentence", "term"), [
    ("这一章从零实现自注意力。", "自注意力"),
    ("每一层都有多头注意力。", "多头注意力"),
    ("Transformer 使用层归一化而不是批量归一化。", "层归一化"),
    ("Transformer 使用层归一化而不是批量归一化。", "批量归一化"),
    ("再谈位置编码", "位置编码"),
    ("RoPE 即旋转位置编码。", "位置编码"),
    ("模型生成了 200 个新词元。", "词元"),
])
def test_a_page_is_indexed_under_the_term_it_uses(chinese_search, sentence, term):
    words = indexed_words(chinese_search, sentence)
    assert term in words, f"{sentence!r} is indexed as {sorted(words)}, without {term!r}"


@pytest.mark.parametrize(("sentence", "shorter"), [
    ("批量归一化", "归一化"), ("层归一化", "归一化"), ("自注意力", "注意力"), ("多头注意力", "注意力"),
])
def test_a_term_is_also_indexed_under_the_words_inside_it(chinese_search, sentence, shorter):
    """A search for 归一化 still finds a page that only writes 批量归一化."""
    assert shorter in indexed_words(chinese_search, sentence)
