"""The Chinese edition's interface in Chinese, and a search that finds and ranks Chinese terms.

Loaded by the Chinese edition only (zh/_config.yml, written by zh/zh_edition.py).

Interface. With ``language: zh_CN`` Sphinx, pydata-sphinx-theme and sphinx-book-theme translate
most of their strings, but not all: the launch buttons ("Launch on Colab"), the colour-mode
switch, "Link to this heading", the footer's "© Copyright" are English in their zh_CN
catalogs, and "Print to PDF" is Traditional Chinese. Our translations are in
locales/zh_CN/LC_MESSAGES/*.po; this extension reads them (babel, which Sphinx uses) and puts
them in front of the catalogs Sphinx loaded, so they win and every other string still comes
from the shipped catalogs. A locale_dirs entry cannot do this for sphinx-book-theme: its own
catalog is registered first and a later one is only a fallback. A few strings are written
into the pages without translation (the sidebar toggles' titles, aria-labels of the themes,
of myst-nb's hidden cells and of sphinx-togglebutton's script); HARDCODED replaces them in the
written pages and that script. The search box's placeholder, the logo's alt text and
sphinx-togglebutton's hints ("Click to show", its catalog is named zh-cn, which zh_CN does not
find) are options, set here. myst-nb writes the prompts of a hidden cell ("Show code cell
source") in English and has no catalog: TranslateHiddenCellPrompts translates them (mystnb.po).

Search. The search index of a zh_CN build is segmented by jieba (sphinx.search.zh, at build
time), with jieba's general dictionary, which lacks most of the book's terms: 自注意力 was cut
into 自 + 注意力, and since the index keeps no single characters, a search for 自注意力 was a
search for 注意力. Sphinx's documented option html_search_options["dict"] loads a jieba user
dictionary: search_dictionary() writes one from the glossary's Chinese terms (zh/terms.yml), so
each term is indexed whole, besides the 2- and 3-character words jieba's cut_for_search also
indexes inside it (批量归一化 -> 批量, 归一化, 批量归一化). zh_static/zh_search.js splits a query
into the index's words (greedy longest match: 因果掩码 stays whole) and makes every Chinese word
of it required (Sphinx lets words under 3 characters be missing: 批量 in "批量 归一化" was). zh_search_scorer.js (html_search_scorer) ranks a page whose title names the query
first, and at equal match a chapter before an exercise (issue 32).

Sphinx 7.4's Chinese search language keeps the Latin words it has seen in one list and looks
every word up in it while stemming, so indexing takes time quadratic in the book's Latin words
(code, names): 54 of the Chinese build's 99 s. Sphinx 8 keeps them in a set; SearchChinese here
is Sphinx 7.4's with a set, registered for "zh" in its place (the index it writes is the same).
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path

from sphinx.search import zh as sphinx_zh
from sphinx.transforms.post_transforms import SphinxPostTransform

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "locales"
STATIC = Path(__file__).resolve().parent / "zh_static"
SCORER = Path(__file__).resolve().parent / "zh_search_scorer.js"
TERMS = ROOT / "zh" / "terms.yml"

# Strings the themes and myst-nb write into the pages without translating them: (HTML as
# written, msgid of a catalog of locales/ whose translation replaces the English inside it).
HARDCODED = [
    ('title="Toggle primary sidebar"', "Toggle primary sidebar"),
    ('title="Toggle secondary sidebar"', "Toggle secondary sidebar"),
    ('aria-label="Main"', "Main"),
    ('aria-label="Page"', "Page"),
    # myst-nb's hidden cells, and sphinx-togglebutton's dropdowns (written by its script)
    ('aria-label="Toggle hidden content"', "Toggle hidden content"),
]
# The scripts of _static/ that write a string of HARDCODED into the page.
HARDCODED_SCRIPTS = ["togglebutton.js"]


def read_po(path: Path) -> dict[str, str]:
    """{msgid: msgstr} of a .po file (untranslated and fuzzy entries left out)."""
    from babel.messages.pofile import read_po as babel_read_po

    with path.open("rb") as f:
        catalog = babel_read_po(f)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy and isinstance(m.id, str)}


class _Overrides(gettext.NullTranslations):
    """Our messages first, then the catalog Sphinx had loaded (as its fallback)."""

    def __init__(self, messages: dict[str, str], fallback):
        super().__init__()
        self.messages = messages
        if fallback is not None:
            self.add_fallback(fallback)

    def gettext(self, message):
        if message in self.messages:
            return self.messages[message]
        return self._fallback.gettext(message) if self._fallback else message

    def ngettext(self, singular, plural, n):
        if n == 1 and singular in self.messages:
            return self.messages[singular]
        return self._fallback.ngettext(singular, plural, n) if self._fallback else (singular if n == 1 else plural)


def catalog_dir(language: str) -> Path:
    return LOCALES / language / "LC_MESSAGES"


def all_messages(language: str | None) -> dict[str, str]:
    """{msgid: msgstr} of every catalog of locales/<language>/ (one msgid, one translation)."""
    messages = {}
    for po in sorted(catalog_dir(language or "").glob("*.po")):
        messages.update(read_po(po))
    return messages


def _install_catalogs(app):
    from sphinx import locale

    folder = catalog_dir(app.config.language or "")
    for po in sorted(folder.glob("*.po")):
        key = ("general", po.stem)  # (namespace, catalog) as sphinx.locale.init registers them
        loaded = locale.translators.get(key)
        if isinstance(loaded, gettext.GNUTranslations):
            # The object Sphinx has also handed to the templates (app.translator): update it.
            loaded._catalog.update(read_po(po))
        else:
            locale.translators[key] = _Overrides(read_po(po), loaded)


def _theme_options(app, config):
    messages = all_messages(config.language)
    options = config.html_theme_options
    if "Search this book..." in messages:
        options["search_bar_text"] = messages["Search this book..."]
    if "Home" in messages:
        logo = dict(options.get("logo") or {})
        logo.setdefault("alt_text", f"{config.html_title or config.project} - {messages['Home']}")
        options["logo"] = logo
    config.html_static_path.append(str(STATIC))


def _togglebutton_hints(app, config):
    # sphinx-togglebutton writes its hints into every page on config-inited: this runs before it
    # (priority 400).
    messages = all_messages(config.language)
    for name, msgid in (("togglebutton_hint", "Click to show"), ("togglebutton_hint_hide", "Click to hide")):
        if msgid in messages:
            setattr(config, name, messages[msgid])


# jieba's weight of an everyday word such as 查询 (933) or 在线 (1082); a glossary word weighs at
# least this much, so that it is cut whole inside a sentence too (新词元 -> 新 + 词元, not 新词 + 元).
TERM_WEIGHT = 1000


def glossary_words(terms_file: Path = TERMS) -> list[str]:
    """The Chinese words of the glossary's terms (zh/terms.yml: each row's `zh` and `also`).

    Each run of Han characters of a name is a word (KV 缓存 -> 缓存), but for a phrase (a run
    with 的, 与 or 和: 起始符与结束符) and a word that holds another word of 4 or more characters:
    旋转位置编码 is left to jieba to cut into 旋转 + 位置编码, so that a search for 位置编码 finds it
    (cut_for_search indexes only the 2- and 3-character words inside a word).
    """
    import yaml

    rows = yaml.safe_load(terms_file.read_text(encoding="utf-8")) or []
    words = set()
    for row in rows:
        for name in [row.get("zh") or "", *(row.get("also") or [])]:
            words.update(w for w in re.findall(r"[\u3400-\u9fff]{2,}", str(name)) if not re.search("[的与和]", w))
    return sorted(w for w in words if not any(len(v) >= 4 and v != w and v in w for v in words))


def search_dictionary(path: Path, words: list[str]) -> Path:
    """Write `words` as a jieba user dictionary ("word weight" per line) to `path`."""
    import jieba

    jieba.initialize()
    lines = [f"{word} {max(TERM_WEIGHT, jieba.dt.FREQ.get(word, 0))}" for word in words]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _search_options(app, config):
    if not (config.html_search_language or config.language or "").startswith("zh"):
        return
    dictionary = search_dictionary(Path(app.doctreedir) / "zh_search_dictionary.txt", glossary_words())
    config.html_search_options = {**(config.html_search_options or {}), "dict": str(dictionary)}
    config.html_search_scorer = str(SCORER)


class TranslateHiddenCellPrompts(SphinxPostTransform):
    """myst-nb's prompts of a hidden cell ("Show code cell source") in the edition's language.

    myst-nb builds them from its settings nb_code_prompt_show/hide ("Show code cell {type}",
    {type} replaced by the English source, outputs or content) and has no catalog; this runs
    right after myst-nb's HideInputCells (priority 199) has put them on the nodes.
    """

    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs):
        from myst_nb.sphinx_ import HideCodeCellNode
        from sphinx.locale import get_translation

        _ = get_translation("mystnb")
        for node in self.document.findall(HideCodeCellNode):
            node["prompt_show"] = str(_(node["prompt_show"]))
            node["prompt_hide"] = str(_(node["prompt_hide"]))


def _translate_hardcoded(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    messages = all_messages(app.config.language)
    replacements = [(html, html.replace(msgid, messages[msgid])) for html, msgid in HARDCODED if msgid in messages]
    outdir = Path(app.outdir)
    pages = [page for page in outdir.rglob("*.html") if "_static" not in page.relative_to(outdir).parts]
    scripts = [outdir / "_static" / name for name in HARDCODED_SCRIPTS if (outdir / "_static" / name).is_file()]
    for page in pages + scripts:
        text = page.read_text(encoding="utf-8")
        new = text
        for english, chinese in replacements:
            new = new.replace(english, chinese)
        if new != text:
            page.write_text(new, encoding="utf-8")


class _LatinTerms(set):
    """The Latin words seen, as Sphinx 7.4's SearchChinese.split adds them (``extend``)."""

    def extend(self, words) -> None:
        self.update(words)


class SearchChinese(sphinx_zh.SearchChinese):
    """Sphinx 7.4's Chinese search language, with its Latin words in a set of its own."""

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = _LatinTerms()


def setup(app):
    app.add_search_language(SearchChinese)
    app.connect("config-inited", _theme_options)
    app.connect("config-inited", _togglebutton_hints, priority=400)
    app.connect("config-inited", _search_options)
    app.add_post_transform(TranslateHiddenCellPrompts)
    app.connect("builder-inited", _install_catalogs)
    app.connect("build-finished", _translate_hardcoded)
    app.add_js_file("zh_search.js")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
