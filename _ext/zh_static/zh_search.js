/*
 * Chinese search: split a query into the words of the search index (_ext/zh_interface.py).
 *
 * Sphinx segments the Chinese text with jieba when it builds the index, so 因果掩码 is indexed
 * as the two words 因果 and 掩码; Sphinx's own splitQuery only splits at spaces and punctuation,
 * so the query 因果掩码 would be looked up as one word, and found nowhere. This splitQuery
 * (searchtools.js uses a global splitQuery when one is defined) cuts every run of Han
 * characters into the longest words the index knows, left to right (greedy longest match):
 * 因果掩码 -> 因果 掩码, 多头注意力 -> 多头 注意力. A character no indexed word starts with is
 * dropped (the index has no single characters), so it cannot make a search find nothing.
 * Everything else (Latin words, numbers) is split as Sphinx does.
 */
"use strict";

(function () {
  const HAN = /\p{Script=Han}/u;
  const LONGEST_WORD = 12;

  const defaultSplit = (query) =>
    query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu).filter((term) => term);

  // The index's words: body terms and title terms (lower case, as Sphinx stores them).
  function vocabulary() {
    const index = typeof Search !== "undefined" ? Search._index : null;
    if (!index) return null;
    if (!index._zhVocabulary) {
      index._zhVocabulary = new Set([...Object.keys(index.terms || {}), ...Object.keys(index.titleterms || {})]);
    }
    return index._zhVocabulary;
  }

  // Greedy longest match of one run of Han characters against the vocabulary.
  function segmentHan(run, words) {
    const out = [];
    let i = 0;
    while (i < run.length) {
      let found = "";
      for (let j = Math.min(run.length, i + LONGEST_WORD); j > i + 1; j--) {
        if (words.has(run.slice(i, j))) {
          found = run.slice(i, j);
          break;
        }
      }
      if (found) {
        out.push(found);
        i += found.length;
      } else {
        if (words.has(run[i])) out.push(run[i]);
        i += 1;
      }
    }
    return out;
  }

  function zhSplitQuery(query) {
    const words = vocabulary();
    const terms = [];
    for (const piece of defaultSplit(query)) {
      if (!words || !HAN.test(piece)) {
        terms.push(piece);
        continue;
      }
      // A piece may mix scripts (KV缓存): keep the non-Han parts whole, segment the Han runs.
      for (const part of piece.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu)) {
        if (HAN.test(part) && !words.has(part.toLowerCase())) terms.push(...segmentHan(part, words));
        else terms.push(part);
      }
    }
    return terms;
  }

  window.zhSplitQuery = zhSplitQuery;
  window.splitQuery = zhSplitQuery;
})();
