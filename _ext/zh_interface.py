"""The Chinese edition's interface in Chinese, and a search that finds Chinese compounds.

Loaded by the Chinese edition only (zh/_config.yml, written by zh/zh_edition.py).

Interface. With ``language: zh_CN`` Sphinx, pydata-sphinx-theme and sphinx-book-theme translate
most of their strings, but not all: the launch buttons ("Launch on Colab"), the colour-mode
switch, "Link to this heading", the footer's "© Copyright" are English in their zh_CN
catalogs, and "Print to PDF" is Traditional Chinese. Our translations are in
locales/zh_CN/LC_MESSAGES/{sphinx,booktheme}.po; this extension reads them (babel, which Sphinx
uses) and puts them in front of the catalogs Sphinx loaded, so they win and every other string
still comes from the shipped catalogs. A locale_dirs entry cannot do this for sphinx-book-theme:
its own catalog is registered first and a later one is only a fallback. A few strings are
written into the themes' templates without translation (the sidebar toggles' titles, two
aria-labels); HARDCODED replaces them in the written pages, with the translations of the same
.po file. The search box's placeholder and the logo's alt text are theme options, set here.

Search. The search index of a zh_CN build is segmented by jieba (at build time), so 因果掩码 is
indexed as 因果 + 掩码; a query typed as one word would find nothing. zh_static/zh_search.js
splits a Han query, in the browser, into the longest words of the index's own vocabulary
(greedy longest match) before Sphinx's search runs.
"""

from __future__ import annotations

import gettext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "locales"
STATIC = Path(__file__).resolve().parent / "zh_static"

# Strings the themes write into their templates without translating them: (HTML as written,
# msgid of sphinx.po whose translation replaces the English inside it).
HARDCODED = [
    ('title="Toggle primary sidebar"', "Toggle primary sidebar"),
    ('title="Toggle secondary sidebar"', "Toggle secondary sidebar"),
    ('aria-label="Main"', "Main"),
    ('aria-label="Page"', "Page"),
]


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
    messages = {}
    for po in sorted(catalog_dir(config.language or "").glob("*.po")):
        messages.update(read_po(po))
    options = config.html_theme_options
    if "Search this book..." in messages:
        options["search_bar_text"] = messages["Search this book..."]
    if "Home" in messages:
        logo = dict(options.get("logo") or {})
        logo.setdefault("alt_text", f"{config.html_title or config.project} - {messages['Home']}")
        options["logo"] = logo
    config.html_static_path.append(str(STATIC))


def _translate_hardcoded(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    messages = read_po(catalog_dir(app.config.language or "") / "sphinx.po")
    replacements = [(html, html.replace(msgid, messages[msgid])) for html, msgid in HARDCODED if msgid in messages]
    for page in Path(app.outdir).rglob("*.html"):
        if "_static" in page.relative_to(app.outdir).parts:
            continue
        text = page.read_text(encoding="utf-8")
        new = text
        for english, chinese in replacements:
            new = new.replace(english, chinese)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("config-inited", _theme_options)
    app.connect("builder-inited", _install_catalogs)
    app.connect("build-finished", _translate_hardcoded)
    app.add_js_file("zh_search.js")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
