"""The Chinese edition's search ranks the page that teaches a term first (issue 32, item 6).

A learner who types a glossary term into the Chinese search box must find the chapter about
it at the top, and a longer term must narrow the search, not widen it. Both failed while the
index was segmented by jieba's general dictionary alone: it has no 自注意力 or 层归一化, the
index keeps no single characters, so 自 and 层 were dropped from the query (自注意力 searched
for 注意力), and Sphinx does not require words shorter than 3 characters to match, so 批量 in
批量归一化 became optional and the search returned more pages than 归一化 alone.
The fix (_ext/zh_interface.py): the glossary's Chinese terms (zh/terms.yml) are a jieba user
dictionary, so they are indexed and looked up whole; every Chinese word of a query is required
(_ext/zh_static/zh_search.js); a page whose title names the query comes first, a chapter before
its exercise (_ext/zh_search_scorer.js). Run with the network off (conftest.py).
"""

from __future__ import annotations

import pytest

from book_site import SHOTS, zh_search_ranked

pytestmark = pytest.mark.browser

# A glossary term and the chapter that teaches it: the first result of a search for the term.
CHAPTER_OF_TERM = {
    "自注意力": "zh/chapters/01_self_attention.html",
    "多头注意力": "zh/chapters/02_multi_head.html",
    "层归一化": "zh/chapters/06_layernorm_vs_batchnorm.html",
    "位置编码": "zh/chapters/13_positions.html",
    "批量归一化": "zh/chapters/06_layernorm_vs_batchnorm.html",
}


@pytest.mark.parametrize("query", list(CHAPTER_OF_TERM))
def test_search_lists_the_chapter_about_a_term_first(visitor, site_url, query):
    driver = visitor.driver
    ranked = zh_search_ranked(driver, site_url, query)
    driver.save_screenshot(str(SHOTS / f"zh__search-ranked--{query}.png"))
    print(f"{query}: {ranked[:5]}")
    assert ranked, f"search for {query} found nothing"
    want = CHAPTER_OF_TERM[query]
    place = ranked.index(want) + 1 if want in ranked else None
    assert ranked[0] == want, (f"search for {query}: {want} is {'missing' if place is None else f'number {place}'}"
                               f"; the first five are {ranked[:5]}")


# (a query, a shorter one that every page the first finds must also be found by)
NARROWER = [("批量归一化", "归一化"), ("自注意力", "注意力"), ("多头注意力", "注意力"), ("层归一化", "归一化"),
            # two words: the 2-character 批量 is required too, not only 归一化
            ("批量 归一化", "归一化"), ("批量 归一化", "批量")]


@pytest.mark.parametrize(("longer", "shorter"), NARROWER)
def test_a_longer_query_narrows_the_search(visitor, site_url, longer, shorter):
    """Every page that uses 批量归一化 uses 归一化: the longer query finds a subset."""
    driver = visitor.driver
    found_longer = set(zh_search_ranked(driver, site_url, longer))
    found_shorter = set(zh_search_ranked(driver, site_url, shorter))
    print(f"{longer}: {len(found_longer)} pages, {shorter}: {len(found_shorter)} pages")
    assert found_longer, f"search for {longer} found nothing"
    extra = sorted(found_longer - found_shorter)
    assert not extra, (f"search for {longer} found {len(found_longer)} pages, {shorter} {len(found_shorter)}; "
                       f"only {longer} found {extra}")
