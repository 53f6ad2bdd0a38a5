"""The feedback's languages: English or Chinese, chosen by the notebook the learner opens.

The Chinese notebook's checks cell is ``Notebook(tests_dir="tests", language="zh")``. The fixed
texts of the checks are written in both languages (``_say(english, chinese)`` in the modules of
this package; ``fixed_texts`` reads them from their source); the texts the test files pass in
(what was checked, hints, reasons) are looked up in the catalog ``mha.course.messages_zh``
(English -> Chinese, numbers and code kept) by ``translate``. The grader finds the language with
``notebook_language(nb)``; a test run can also set it with ``with messages_in("zh"):`` or
``MHA_CHECK_LANGUAGE=zh``. ``check_output_in("zh", data)`` turns a check cell's stored English
output into the one a run in Chinese prints (zh/zh_edition.py writes it into the Chinese
exercise notebooks).
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import os
import re
from pathlib import Path

# Loaded with this module, so that the grader has read it before any notebook runs.
from mha.course.messages_zh import MESSAGES
from mha.course.mistakes import messages_zh as _mistakes_zh

# The translation catalog: the test files' texts and the catalogue of mistakes' hints.
CATALOG = {**MESSAGES, **_mistakes_zh()}
# The modules whose ``_say(english, chinese)`` calls are the checks' own texts.
PACKAGE = Path(__file__).resolve().parent

LANGUAGES = ("en", "zh")
# A context variable, not a global: the grader grades several notebooks at once in threads.
_language = contextvars.ContextVar("mha_check_language", default=None)
# English texts asked for in Chinese that the catalog lacks (they are shown in English).
untranslated: set[str] = set()


def _check_language(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(map(repr, LANGUAGES))}, got {language!r}")
    return language


def current_language() -> str:
    """The feedback language of this run: ``messages_in``'s, else ``$MHA_CHECK_LANGUAGE``, else 'en'."""
    language = _language.get()
    if language is None:
        language = os.environ.get("MHA_CHECK_LANGUAGE", "en") or "en"
    return _check_language(language)


@contextlib.contextmanager
def messages_in(language: str | None):
    """Within the block, checks give their feedback in ``language`` ('en' or 'zh'; None: unchanged)."""
    if language is None:
        yield
        return
    token = _language.set(_check_language(language))
    try:
        yield
    finally:
        _language.reset(token)


def _say(en: str, zh: str) -> str:
    """One of the checks' fixed texts, in the current language."""
    return zh if current_language() == "zh" else en


_PLACEHOLDER = re.compile(r"\{[^{}]+\}")
_REST = "{…}"  # in a pattern: the rest of a text built as `fragment + other text` (or the reverse)
# Compiled templates of _entries("catalog" | "fixed" | "feedback"): (patterns, fields, Chinese, code fields).
_templates: dict[str, list[tuple[list[re.Pattern], list[str], str, set[str]]]] = {}
# A field's value: never starting or ending inside a number (`below {target}.{hint}` must not
# read `below 3.75.` as target `3` and a hint `75.`).
_FIELD = r"(?!(?<=\d)\d)(?!(?<=\d\.)\d)(.%s)(?!(?<=\d)\.?\d)"


def is_code(text: str) -> bool:
    """A text that is a call or a name, e.g. ``attention(q, k, v)``: the same in every language."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Call, ast.Name, ast.Attribute, ast.Subscript))


def _entries(texts: str) -> dict[str, str]:
    """English -> Chinese: the catalog ("catalog"), the checks' own texts ("fixed"), or both
    ("feedback": what the fields of the checks' texts are made of)."""
    return {"catalog": CATALOG, "fixed": fixed_texts()}.get(texts) or {**fixed_texts(), **CATALOG}


def _catalog_templates(texts: str = "catalog"):
    """The entries that are f-strings (``{fields}``) or fragments of a concatenation
    (starting or ending with a space), as (regex over the English, field names, Chinese, the
    fields written as code between backticks, whose brackets need not balance)."""
    if texts not in _templates:
        found = []
        for english, chinese in _entries(texts).items():
            names = _PLACEHOLDER.findall(english)
            head, tail = english[:1].isspace(), english[-1:].isspace()
            if not names and not head and not tail:
                continue
            literal = _PLACEHOLDER.split(english)
            if head:
                names, chinese = [_REST] + names, _REST + chinese
            if tail:
                names, chinese = names + [_REST], chinese + _REST
            patterns = []
            for field, rest in ((_FIELD % "+?", "(.*?)"), (_FIELD % "+", "(.*)")):  # short, else long
                pattern = field.join(re.escape(part) for part in literal)
                pattern = (rest if head else "") + pattern + (rest if tail else "")
                patterns.append(re.compile(f"^{pattern}$", re.S))
            # The most literal text first; a match whose rest does not translate is passed over.
            code = {name for name in names if f"`{name}`" in english}
            found.append((-len("".join(literal)), patterns, names, chinese, code))
        found.sort(key=lambda item: item[0])
        _templates[texts] = [item[1:] for item in found]
    return _templates[texts]


def _balanced(value: str) -> bool:
    """Brackets balanced: a field's value is `[4, 4, 16]`, never `[4` (``, `` split it wrongly)."""
    depth = []
    for char in value:
        if char in "([{":
            depth.append(")]}"["([{".index(char)])
        elif char in ")]}":
            if not depth or depth.pop() != char:
                return False
    return not depth


def _translation(text: str, texts: str = "catalog") -> str | None:
    """The Chinese of ``text``, or None when the entries (``_entries(texts)``) cannot make it."""
    if is_code(text) or not re.search(r"[A-Za-z]", text):
        return text  # code, numbers, shapes: the same in every language
    entries = _entries(texts)
    if text in entries:
        return entries[text]
    inner = "feedback" if texts == "fixed" else texts  # the fields of the checks' texts: any text
    for patterns, names, chinese, code in _catalog_templates(texts):
        for match in (p.match(text) for p in patterns):
            if not match or not all(_balanced(v) or n in code for n, v in zip(names, match.groups())):
                continue
            values = {}
            for name, value in zip(names, match.groups()):
                # The rest of a concatenation must translate too; a field's value may (a label).
                translated = _translation(value, inner)
                if name == _REST:
                    values[name] = translated
                else:  # a field's value that does not translate: the learner's call, a number
                    values[name] = _described(translated or value) if inner == "feedback" else (translated or value)
            if None not in values.values():
                return re.sub(r"\{[^{}]+\}|\{…\}", lambda m: values.get(m.group(0), m.group(0)), chinese)
    return None


def translate(text: str, record: bool = True) -> str:
    """``text`` (a message from a test file) in the current language.

    In Chinese: the catalog's translation of the exact text; else of the f-string it was
    formatted from (``'the output for L = {L}, S = {S}'`` matches ``'the output for L = 4, S = 7'``),
    with the values put back in the Chinese (each value itself translated when the catalog
    has it); else of the pieces it was concatenated from. A text the catalog lacks stays
    English and (``record``) is noted in ``untranslated``."""
    if current_language() != "zh" or not isinstance(text, str) or not text.strip():
        return text
    chinese = _translation(text)
    if chinese is None:
        if record:
            untranslated.add(text)
        return text
    return chinese


def _template(node: ast.expr) -> str | None:
    """An f-string of the checks as a catalog-style template: each field named by its code."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
                       for part in node.values)
    return None


_fixed: dict[str, str] = {}


def fixed_texts() -> dict[str, str]:
    """The checks' own texts, English -> Chinese, read from the ``_say(english, chinese)`` calls
    of this package's modules (``"{what} returned None. ..." -> "{what} 返回了 None。..."``): one
    source of every text."""
    if not _fixed:
        for module in sorted(PACKAGE.glob("*.py")):
            for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_say" \
                        and len(node.args) == 2:
                    english, chinese = map(_template, node.args)
                    if english is not None and chinese is not None:
                        _fixed[english] = chinese
    return _fixed


_SHAPE_FIELD = " {shape_str(value.shape)}"


def _described(text: str) -> str:
    """``text`` (e.g. a call ``attention(q tensor [6, 8], ...)``) with the arguments ``describe``
    wrote (``tensor [6, 8]``, ``bool tensor [4, 4]``) as ``describe`` writes them in Chinese."""
    for english, chinese in sorted(fixed_texts().items(), key=lambda item: -len(item[0])):
        if english.endswith(_SHAPE_FIELD) and _SHAPE_FIELD not in english[:-len(_SHAPE_FIELD)]:
            words = re.escape(english[:-len(_SHAPE_FIELD)])
            text = re.sub(rf"(?<![^( ]){words} (\[[\d, ]*\])",
                          lambda m: chinese.replace(_SHAPE_FIELD.strip(), m.group(1)), text)
    return text


def translate_feedback(message: str) -> str:
    """The Chinese of a whole failure message that a check showed in English (a stored output):
    the checks' texts and the catalog's, with the values put back, as a run in Chinese makes
    it. ValueError when a piece has no translation."""
    # A message is a text followed by lines added to it (``_hint``, ``_learner_line``: the texts
    # that start with a new line): each piece is translated on its own.
    starts = tuple(english[:english.index("{")] for english in fixed_texts() if english.startswith("\n"))
    pieces = [""]
    for line in message.strip().split("\n"):
        if ("\n" + line).startswith(starts):
            pieces.append("\n" + line)
        else:
            pieces[-1] += ("\n" if pieces[-1] else "") + line
    chinese = [_translation(piece, "fixed") if piece else "" for piece in pieces]
    if None in chinese:  # not a text of the checks: a test's own words (failure_message)
        whole = _translation(message.strip())
        chinese = [whole] if whole is not None else chinese
    if None in chinese:
        piece = pieces[chinese.index(None)]
        raise ValueError(f"no Chinese for {piece!r} in this feedback (add the missing text to "
                         f"mha/course/messages_zh.py):\n{message}")
    return "".join(chinese)


def notebook_language(nb) -> str:
    """The feedback language a notebook chose in its checks cell: 'zh' when it makes
    ``Notebook(..., language="zh")``, else 'en'. ``nb``: a notebook (dict or nbformat node)."""
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        match = re.search(r"\bNotebook\([^)]*\blanguage\s*=\s*[\"'](\w+)[\"']", source)
        if match and match.group(1) in LANGUAGES:
            return match.group(1)
    return "en"


# ----------------------------------------------------------------------------- stored outputs

_FAILED = "    ❌ Test case failed"
_NOTE, _NOTE_MORE = "    ⓘ ", "      "  # a passed check's note (CheckResult), its first line and the others


def _parse_check_result(text: str):
    """The English ``CheckResult`` whose ``repr`` is ``text`` (a check cell's stored output)."""
    from mha.course.checks.feedback import CaseResult, CheckResult  # (feedback needs this module)

    first, *lines = text.split("\n")
    match = re.fullmatch(r"(\S+) results:( All test cases passed!| The checks passed\. Note:)?", first)
    if match and match.group(2) == " The checks passed. Note:" and lines and lines[0].startswith(_NOTE):
        notes = []
        for line in lines:
            if line.startswith(_NOTE):
                notes.append([line[len(_NOTE):]])
            elif line.startswith(_NOTE_MORE):
                notes[-1].append(line[len(_NOTE_MORE):])
            else:
                raise ValueError(f"not the output of a check: {line!r} in {text[:200]!r}")
        return CheckResult(match.group(1), [CaseResult(f"case {i}", False, True, "\n".join(n))
                                            for i, n in enumerate(notes, 1)], "en")
    if not match or (match.group(2) and lines) or (not match.group(2) and (not lines or lines[0] != _FAILED)):
        raise ValueError(f"not the output of a check: {text[:200]!r}")
    messages = []
    for line in lines:
        if line == _FAILED:
            messages.append([])
        elif line.startswith("    "):
            messages[-1].append(line[4:])
        else:
            raise ValueError(f"not the output of a check: {line!r} in {text[:200]!r}")
    results = [CaseResult(f"case {i}", False, False, "\n".join(m)) for i, m in enumerate(messages, 1)]
    return CheckResult(match.group(1), results, "en")


def check_output_in(language: str, data: dict) -> dict:
    """A check cell's output as a run in ``language`` shows it, from the one an English run
    stored (``data``: its ``text/plain`` and ``text/html``, str or list of lines). The messages
    are translated by ``translate_feedback``; the output is rendered by ``CheckResult``, whose
    English rendering must give back ``data`` exactly (else ValueError: not a check's output)."""
    from mha.course.checks.feedback import CaseResult, CheckResult

    joined = {key: "".join(value) if isinstance(value, list) else value for key, value in data.items()}
    result = _parse_check_result(joined["text/plain"])
    rendered = {"text/plain": repr(result), "text/html": result._repr_html_()}
    if set(joined) != set(rendered) or any(joined[key] != rendered[key] for key in rendered):
        raise ValueError(f"not the output of the checks' CheckResult: {joined['text/plain'][:200]!r}")
    if _check_language(language) == "en":
        return rendered
    results = [CaseResult(r.name, r.hidden, r.passed, translate_feedback(r.message)) for r in result.results]
    translated = CheckResult(result.question, results, language)
    return {"text/plain": repr(translated), "text/html": translated._repr_html_()}
