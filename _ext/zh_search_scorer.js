/*
 * Search scorer of the Chinese edition: html_search_scorer, set by _ext/zh_interface.py.
 * Sphinx puts this file into language_data.js, read after searchtools.js, so this Scorer is the
 * one its search uses. The weights are Sphinx's own (searchtools.js); score() adds two rules.
 *
 * Sphinx scores a page 15 when a query word is in any of its headings and 5 when it is in its
 * text, and orders equal scores by title. Most pages of the book have a heading or a sentence
 * with 注意力 or 归一化, so the page about a term came after pages that only mention it (issue 32:
 * 层归一化 put the errata first). Here:
 *   - a page whose own title holds every word of the query is about it: +PAGE_TITLE;
 *   - at an equal match a chapter comes before the rest (+CHAPTER): a chapter teaches a term,
 *     its exercise (练习 N：<the chapter's title>) practises it, the front page names the book.
 */

var Scorer = {
  score: (result) => {
    const [docname, title, anchor, _descr, score, _filename] = result;
    let total = score;
    if (!anchor && ZhScorer.titleHoldsQuery(title)) total += ZhScorer.PAGE_TITLE;
    if (docname.startsWith("chapters/")) total += ZhScorer.CHAPTER;
    return total;
  },

  // Sphinx's weights (searchtools.js, Sphinx 7.4)
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {
    0: 15,
    1: 5,
    2: -5,
  },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

var ZhScorer = {
  // More than any heading or text match (at most 15 + 1 for a heading named exactly like the query)
  PAGE_TITLE: 20,
  CHAPTER: 1,

  // The query's words as the search looks them up (the search page's ?q=, split by splitQuery).
  queryWords: () => {
    const query = (new URLSearchParams(window.location.search).get("q") || "").toLowerCase().trim();
    if (ZhScorer._query !== query) {
      ZhScorer._query = query;
      ZhScorer._words = (typeof splitQuery === "function" ? splitQuery(query) : query.split(/\s+/)).filter((w) => w);
    }
    return ZhScorer._words;
  },

  titleHoldsQuery: (title) => {
    const words = ZhScorer.queryWords();
    const lower = (title || "").toLowerCase();
    return words.length > 0 && words.every((word) => lower.includes(word));
  },
};
