/*
 * Chinese search: split a query into the words of the search index (_ext/zh_interface.py).
 *
 * Sphinx segments the Chinese text with jieba when it builds the index, with the glossary's
 * terms as a user dictionary (_ext/zh_interface.py): 因果掩码 and 自注意力 are words of the index,
 * and so are the 2- and 3-character words inside them (因果, 掩码, 注意力). Sphinx's own splitQuery
 * only splits at spaces and punctuation, so a query written without spaces, 掩码注意力, would be
 * looked up as one word, and found nowhere. This splitQuery (searchtools.js uses a global
 * splitQuery when one is defined) cuts every run of Han characters into the longest words the
 * index knows, left to right (greedy longest match): 掩码注意力 -> 掩码 注意力; a run the index
 * holds whole stays whole. A character no indexed word starts with is dropped (the index has no
 * single characters), so it cannot make a search find nothing. Everything else (Latin words,
 * numbers) is split as Sphinx does.
 *
 * Every Chinese word of a query is required. Sphinx lets words of 1 or 2 letters be missing,
 * meant for English ("a", "of"), by counting: a page passes if it holds as many of the query's
 * words as the query has words of 3 or more letters. Most Chinese words have 2 characters, so a
 * page with 批量 and no 归一化 passed for "批量 归一化", which found more pages than 归一化 alone.
 * requireEveryHanWord() wraps Sphinx's Search.performTermsSearch to drop the pages that lack one
 * of the query's Chinese words; splitQuery installs it, as Sphinx calls it first in every search.
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

  // Does the page (`file`, a number) hold `word` as Sphinx's search looks it up: the word in its
  // text or a heading, or, for a word of 3 or more characters the index lacks, a longer word
  // that contains it (searchtools.js, performTermsSearch)?
  function pageHas(index, word, file) {
    const lists = (files) => files === file || (Array.isArray(files) && files.includes(file));
    for (const terms of [index.terms, index.titleterms]) {
      if (lists(terms[word])) return true;
      if (word.length > 2 && !Object.hasOwn(terms, word)) {
        if (Object.keys(terms).some((term) => term.includes(word) && lists(terms[term]))) return true;
      }
    }
    return false;
  }

  function requireEveryHanWord() {
    if (typeof Search === "undefined" || !Search.performTermsSearch || Search.performTermsSearch.zhEveryWord) return;
    const sphinxTermsSearch = Search.performTermsSearch;
    const termsSearch = (searchTerms, excludedTerms) => {
      const results = sphinxTermsSearch(searchTerms, excludedTerms);
      const index = Search._index;
      const han = [...searchTerms].filter((term) => HAN.test(term));
      if (!index || han.length < 2) return results;
      return results.filter((result) => {
        const file = index.docnames.indexOf(result[0]);
        return han.every((word) => pageHas(index, word, file));
      });
    };
    termsSearch.zhEveryWord = true;
    Search.performTermsSearch = termsSearch;
  }

  function zhSplitQuery(query) {
    requireEveryHanWord();
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
