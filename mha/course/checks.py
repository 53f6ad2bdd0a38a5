"""Feedback helpers for the graded exercises of *Multi-Head Attention, Executable*.

The exercises' tests (``tests/q*.py``, run by ``grader.check("q1")``) call these helpers so
that a failing check tells the learner what to fix: which function, with which input shapes,
the expected and the actual shape, the largest numerical error and where it is, and a hint
when the answer matches a classic mistake (``//`` instead of ``/``, an inverted mask, a
softmax over the wrong axis, heads split with the wrong layout, ...).

It ships inside the course package (``from mha.course.checks import call, check_tensor``), so
the student notebooks, the public and hidden tests and the grader all use this one copy.

Running a question's tests: ``run_test_file(path, env)`` runs an otter test file against a
notebook namespace and returns one ``CaseResult`` per test case, whose message is only what
the learner can use (``failure_message``: the input, expected against got, a hint), never the
test's source line. The check cells of the student notebooks use ``Notebook(tests_dir)``,
whose ``check("qN")`` shows those messages; the grader (``grading.worker``) uses the same.

Languages: the feedback is in English or in Chinese. The student chooses once, by the notebook
they open: the Chinese notebook's checks cell is ``Notebook(tests_dir="tests", language="zh")``.
The fixed texts of this module are written in both languages (``_say``); the texts the test
files pass in (what was checked, hints, reasons) are looked up in the catalog
``mha.course.messages_zh`` (English -> Chinese, numbers and code kept) by ``translate``. The
grader finds the language with ``notebook_language(nb)`` and passes it to ``run_test_file``;
a test run can also set it with ``with messages_in("zh"):`` or ``MHA_CHECK_LANGUAGE=zh``.
``check_output_in("zh", data)`` turns a check cell's stored English output into the one a run
in Chinese prints (zh/zh_edition.py writes it into the Chinese exercise notebooks).
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import html
import inspect
import math
import os
import re
import signal
import sys
import textwrap
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

# Loaded with this module, so that the grader has read it before any notebook runs.
from mha.course.messages_zh import MESSAGES
from mha.course.mistakes import messages_zh as _mistakes_zh

# The translation catalog: the test files' texts and the catalogue of mistakes' hints.
CATALOG = {**MESSAGES, **_mistakes_zh()}

# Each call of a learner's function gets this many seconds (an infinite loop then fails its
# question instead of hanging the notebook or the grader).
TIME_LIMIT = float(os.environ.get("MHA_CHECK_TIME_LIMIT", "20"))


class CheckFailed(AssertionError):
    """A check failed; the message says what was expected, what came back and what to try."""


# ----------------------------------------------------------------------------- languages

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
    """One of this module's fixed texts, in the current language."""
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
    """English -> Chinese: the catalog ("catalog"), this module's own texts ("fixed"), or both
    ("feedback": what the fields of this module's texts are made of)."""
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
    inner = "feedback" if texts == "fixed" else texts  # the fields of this module's texts: any text
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
    """An f-string of this module as a catalog-style template: each field named by its code."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
                       for part in node.values)
    return None


_fixed: dict[str, str] = {}


def fixed_texts() -> dict[str, str]:
    """This module's own texts, English -> Chinese, read from its ``_say(english, chinese)`` calls
    (``"{what} returned None. ..." -> "{what} 返回了 None。..."``): one source of every text."""
    if not _fixed:
        for node in ast.walk(ast.parse(Path(__file__).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_say" and len(node.args) == 2:
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
    this module's texts and the catalog's, with the values put back, as a run in Chinese makes
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
    if None in chinese:  # not a text of this module: a test's own words (failure_message)
        whole = _translation(message.strip())
        chinese = [whole] if whole is not None else chinese
    if None in chinese:
        piece = pieces[chinese.index(None)]
        raise ValueError(f"no Chinese for {piece!r} in this feedback (add the missing text to "
                         f"mha/course/messages_zh.py):\n{message}")
    return "".join(chinese)


def _hint(text: str) -> str:
    return _say(f"\n  Hint: {text}", f"\n  提示：{text}")


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


class _TimeLimit(BaseException):
    """Raised inside the learner's code when its time is up (a BaseException, so that a bare
    ``except Exception`` in the learner's code does not swallow it)."""


# ----------------------------------------------------------------------------- formatting

def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def describe(value) -> str:
    """Short description of an argument or a result for a message."""
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            return _say(f"bool tensor {shape_str(value.shape)}", f"布尔张量 {shape_str(value.shape)}")
        return _say(f"tensor {shape_str(value.shape)}", f"张量 {shape_str(value.shape)}")
    if isinstance(value, torch.nn.Module):
        return type(value).__name__
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _num(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4f}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}"


def _index_str(flat_index: int, shape) -> str:
    index = []
    for size in reversed(list(shape)):
        index.append(flat_index % size)
        flat_index //= size
    return "[" + ", ".join(str(i) for i in reversed(index)) + "]"


# ----------------------------------------------------------------------------- calling

@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt the block after ``seconds`` (POSIX main thread only; elsewhere no limit)."""
    usable = (
        seconds and seconds > 0 and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _alarm(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_TEST_FILE = re.compile(r"[/\\]tests[/\\]q\d+\.py$")


def _learner_line(exc: BaseException) -> str:
    """``line N: <code>`` of the deepest frame of the learner's own code: not a library's
    (torch, mha, the standard library, site-packages), not this module's, not a test file's
    (``tests/qN.py``: the test's own lambda is not "your code")."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = os.path.abspath(__file__)
    best = None
    for frame in frames:
        name = frame.filename
        if os.path.abspath(name) == mine or f"{os.sep}torch{os.sep}" in name:
            continue
        if f"{os.sep}site-packages{os.sep}" in name or name.startswith("<frozen"):
            continue
        if os.path.abspath(name).startswith(_LIBRARY) or _TEST_FILE.search(name):
            continue
        best = frame
    if best is None or not best.line:
        return ""
    return _say(f"\n  in your code, function {best.name}: `{best.line.strip()}`",
                f"\n  出错位置：你的代码，函数 {best.name}：`{best.line.strip()}`")


def call(fn, name: str, *args, error_hints=(), **named):
    """Call the learner's ``fn`` with a time limit and turn any failure into feedback.

    Positional ``args`` are passed as they are; ``named`` arguments are passed positionally in
    the order given, and their names appear in the messages (``attention(q [2, 4, 8], ...)``).
    ``error_hints`` is a list of ``(text, hint)``: when the learner's code raises an error
    whose message contains ``text``, the hint is added to the feedback.
    """
    if fn is None:
        raise CheckFailed(_say(f"`{name}` is not defined. Run the cell that defines it (and every cell above it) "
                 f"before running this check.",
                 f"`{name}` 尚未定义。请先运行定义它的单元（以及它上面的所有单元），再运行这个检查。"))
    if not callable(fn):
        raise CheckFailed(_say(f"`{name}` should be a function or a class, got {describe(fn)}.",
                               f"`{name}` 应当是一个函数或类，得到的却是 {describe(fn)}。"))
    shown = ", ".join([describe(a) for a in args] + [f"{k} {describe(v)}" for k, v in named.items()])
    signature = f"{name}({shown})"
    try:
        with time_limit(TIME_LIMIT), _recording(fn) as executed:
            result = fn(*args, *named.values())
        _check_bans(executed)
        return result
    except _TimeLimit:
        raise CheckFailed(_say(
            f"{signature} did not finish within {TIME_LIMIT:g} s. Is there an infinite loop "
            f"(a `while` whose condition never becomes false)?",
            f"{signature} 在 {TIME_LIMIT:g} 秒内没有结束。是否有死循环（条件永远不会变为假的 `while`）？"
        )) from None
    except CheckFailed:
        raise
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = translate(message, record=False)  # a test's own words; Python's and torch's stay
        text = _say(f"{signature} raised {type(exc).__name__}: {message}",
                    f"{signature} 抛出了 {type(exc).__name__}：{message}") + _learner_line(exc)
        if isinstance(exc, NotImplementedError):
            text += _hint(_say("replace the `raise NotImplementedError` with your implementation.",
                               "把 `raise NotImplementedError` 换成你的实现。"))
        hints = [(needle, translate(hint)) for needle, hint in error_hints]
        for needle, hint in hints:
            if needle in str(exc):
                text += _hint(hint)
        raise CheckFailed(text) from None


def check_raises(fn, name: str, error: type, *args, why: str = "", **named) -> None:
    """The learner's ``fn`` must raise ``error`` (e.g. ``ValueError``) for this input; ``why``
    says in the learner's words why the input is invalid."""
    shown = ", ".join([describe(a) for a in args] + [f"{k} {describe(v)}" for k, v in named.items()])
    signature = f"{name}({shown})"
    why = translate(why)
    if fn is None:
        raise CheckFailed(_say(f"`{name}` is not defined. Run the cell that defines it (and every cell above it) "
                 f"before running this check.",
                 f"`{name}` 尚未定义。请先运行定义它的单元（以及它上面的所有单元），再运行这个检查。"))
    try:
        with time_limit(TIME_LIMIT):
            result = fn(*args, *named.values())
    except _TimeLimit:
        raise CheckFailed(_say(f"{signature} did not finish within {TIME_LIMIT:g} s.",
                               f"{signature} 在 {TIME_LIMIT:g} 秒内没有结束。")) from None
    except error:
        return
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise CheckFailed(_say(
            f"{signature} should raise {error.__name__} ({why}); it raised "
            f"{type(exc).__name__}: {message}",
            f"{signature} 应当抛出 {error.__name__}（{why}），实际抛出的是 "
            f"{type(exc).__name__}：{message}") + _learner_line(exc)) from None
    raise CheckFailed(_say(f"{signature} should raise {error.__name__} ({why}); it returned "
                           f"{describe(result)}.",
                           f"{signature} 应当抛出 {error.__name__}（{why}），却返回了 {describe(result)}。"))


def check_test_catches(test_fn, name: str, correct, buggy) -> None:
    """Grade a test the learner wrote: ``test_fn(implementation)`` must pass (return) on every
    ``(label, implementation)`` in ``correct`` and fail (raise, e.g. an ``AssertionError``) on
    every one in ``buggy``.

    A test must judge each implementation on its own. So that one cannot instead take the first
    implementation it is given as its oracle, every implementation is tried twice, in a random
    order that starts with a buggy one, each time behind a fresh anonymous wrapper (no name or
    identity to recognise it by), and the two verdicts on one implementation must agree."""
    import random

    if test_fn is None:
        raise CheckFailed(_say(f"`{name}` is not defined. Run the cell that defines it (and every cell above it) "
                 f"before running this check.",
                 f"`{name}` 尚未定义。请先运行定义它的单元（以及它上面的所有单元），再运行这个检查。"))
    if not callable(test_fn):
        raise CheckFailed(_say(f"`{name}` should be a function, got {describe(test_fn)}.",
                               f"`{name}` 应当是一个函数，得到的却是 {describe(test_fn)}。"))
    candidates = [(translate(label), implementation, True) for label, implementation in correct]
    candidates += [(translate(label), implementation, False) for label, implementation in buggy]

    def failure(implementation):
        """None when the learner's test passes, else what it raised."""
        def attention(*args, **kwargs):  # a new object per call: nothing to recognise
            return implementation(*args, **kwargs)

        try:
            with time_limit(TIME_LIMIT):
                test_fn(attention)
        except _TimeLimit:
            raise CheckFailed(_say(f"{name} did not finish within {TIME_LIMIT:g} s.",
                                   f"{name} 在 {TIME_LIMIT:g} 秒内没有结束。")) from None
        except Exception as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return f"{type(exc).__name__}: {message}".rstrip(": ") + _learner_line(exc)
        return None

    order = list(range(len(candidates))) * 2
    random.SystemRandom().shuffle(order)
    if buggy:  # the first implementation the test ever sees is a buggy one
        first = next(i for i, n in enumerate(order) if not candidates[n][2])
        order.insert(0, order.pop(first))
    verdicts: dict[int, list] = {}
    for number in order:
        verdicts.setdefault(number, []).append(failure(candidates[number][1]))
    for number, (label, _, is_correct) in enumerate(candidates):
        errors = verdicts[number]
        if (errors[0] is None) != (errors[1] is None):
            raise CheckFailed(_say(
                f"{name}(attention) passed on {label} once and failed on it another time: its "
                f"verdict depends on what it was given before, not on the implementation.",
                f"{name}(attention) 在{label}上一次通过、另一次失败：它的结论取决于之前收到的实现，"
                f"而不是这个实现本身。") + _hint(_say(
                    "judge each implementation on its own: compare it with a trusted reference or "
                    "with values worked out by hand, never with an implementation the test was "
                    "given earlier.",
                    "请独立地判断每个实现：与可信的参考实现或手算的数值比较，而不要与测试之前收到的"
                    "实现比较。")))
        if is_correct and errors[0] is not None:
            raise CheckFailed(_say(
                f"{name}(attention) fails on a correct attention ({label}): {errors[0]}",
                f"{name}(attention) 在一个正确的注意力实现（{label}）上失败了：{errors[0]}") + _hint(_say(
                    "a test must pass on correct code; compare with a trusted reference, with "
                    "tolerances for rounding (torch.allclose).",
                    "测试在正确的代码上必须通过；请与可信的参考实现比较，并为舍入误差留出容差"
                    "（torch.allclose）。")))
    for number, (label, _, is_correct) in enumerate(candidates):
        if not is_correct and verdicts[number][0] is None:
            raise CheckFailed(_say(
                f"{name}(attention) passes on {label}: a test that catches this bug must fail on "
                f"it (raise, e.g. with assert). A function that returned None without asserting "
                f"anything checks nothing.",
                f"{name}(attention) 在{label}上通过了：能发现这个错误的测试必须在它上面失败"
                f"（抛出异常，例如用 assert）。一个什么都不断言、只返回 None 的函数什么也没有检查。"))


@contextlib.contextmanager
def reference(env: dict, **implementations):
    """Grade one question at a time: while the block runs, the learner's helpers named in
    ``implementations`` (answers to earlier questions) are replaced by correct versions in the
    notebook's namespace ``env``, so a mistake is only counted in the question it belongs to."""
    missing = object()
    saved = {name: env.get(name, missing) for name in implementations}
    env.update({name: _unrecorded(value) for name, value in implementations.items()})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                env.pop(name, None)
            else:
                env[name] = value


def _imported_from(fn) -> str | None:
    """``module.name`` of ``fn`` when it is not the learner's own code but a library's function or
    class (``from mha import split_heads``, ``softmax = torch.softmax``); None when it is the
    learner's: defined in the notebook (module ``__main__``), or where its module cannot say."""
    if callable(getattr(type(fn), "notebook_module", None)):
        # The grader's proxy of an object in the sandbox (grading.sandbox.Remote, whose own
        # class is the grader's): ask the sandbox. There the learner's names all come from the
        # notebook's cells, so any module but __main__ means an import.
        try:
            module = fn.notebook_module()
        except Exception:
            return None
        return f"{module}.{fn.__name__}" if isinstance(module, str) and module != "__main__" else None
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str) or module == "__main__":
        return None
    # A library exports it: `module.qualname` (or, for a builtin such as torch.softmax,
    # `module.name`) is this very object. A function defined inside a test's function, handed
    # to the checks as the learner's, is not exported.
    for path in (getattr(fn, "__qualname__", None), getattr(fn, "__name__", None)):
        found = sys.modules.get(module) if isinstance(path, str) else None
        for part in path.split(".") if found is not None else ():
            found = getattr(found, part, None)
        if found is not None and found is fn:
            return f"{module}.{path}"
    return None


def forbid(fn, name: str, banned: dict[str, str]) -> None:
    """Fail if ``fn`` is not the learner's own code (a library's function or class, imported:
    ``from mha import split_heads``) or if its source uses one of the ``banned`` names
    (``{"softmax": why}``).

    A plain name matches any use of it: ``"softmax"`` catches ``torch.softmax``,
    ``F.softmax``, ``x.softmax`` and a bare ``softmax``. A dotted name matches that spelling
    (``"mha.split_heads"`` catches ``mha.split_heads`` and ``from mha import split_heads``
    inside the function) but not a bare ``split_heads``, which may be the learner's own.
    """
    if fn is None:
        return
    reasons = {bad: translate(why) for bad, why in banned.items()}  # all: a run finds every missing one
    active = _bans.get()
    if active is not None:
        active.append((name, reasons))  # ``call`` refuses what the learner's code executes
    library = _imported_from(fn)
    if library is not None:
        raise CheckFailed(_say(
            f"`{name}` is `{library}`, imported from a library, not your own code: write it yourself "
            f"in the notebook.",
            f"`{name}` 是从库中导入的 `{library}`，不是你自己的代码：请在 notebook 中自己写出它。"))
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return  # no source available (e.g. defined by exec): nothing to check
    used, bare = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            bare.add(node.id)
        if isinstance(node, ast.Attribute):
            parts, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name):
                parts.append(inner.id)
            dotted = ".".join(reversed(parts))
            used.add(dotted)
            used.add(node.attr)
        elif isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                used.add(alias.name)
                used.add(f"{node.module}.{alias.name}")
    own = getattr(fn, "__globals__", {})
    for bad, why in reasons.items():
        if bad in bare and not any(u.endswith("." + bad) for u in used) and _learners(own.get(bad)):
            continue  # the learner's own helper of that name: what it executes is checked by ``call``
        if bad in used or any(u.endswith("." + bad) for u in used):
            raise CheckFailed(_say(f"`{name}` uses `{bad}`: {why}", f"`{name}` 用到了 `{bad}`：{why}"))


# ----------------------------------------------------------------------------- bans by behaviour
#
# ``forbid`` reads the answer's source; while a test case that called ``forbid`` runs the
# learner's code (``call``), every library function that code executes is recorded too
# (``sys.setprofile``: Python functions of torch, mha and the standard library, and built-ins
# such as ``torch.cat`` or ``Tensor.softmax``), so an alias (``torch.concat``), a name bound in
# another cell (``sdpa = F.scaled_dot_product_attention``), ``getattr(F, ...)`` or a helper
# from another cell is refused by what it does, and a learner's own helper, whatever its name,
# is accepted. The grader's correct versions handed to the learner's code (``reference``) are
# not recorded. In the grader the learner's code runs in the sandbox (``Remote``): there only
# the source is read.

# A banned name also bans the library functions that do the same job.
ALIASES = {
    "cat": ("concat", "concatenate", "hstack", "vstack", "dstack", "column_stack", "row_stack"),
    "stack": ("hstack", "vstack", "dstack", "column_stack", "row_stack"),
    "softmax": ("log_softmax", "softmin", "_softmax", "_log_softmax", "Softmax", "LogSoftmax", "Softmin"),
    "Softmax": ("softmax", "log_softmax", "softmin", "LogSoftmax", "Softmin"),
    "logsumexp": ("log_softmax", "softmax"),
    "scaled_dot_product_attention": ("multi_head_attention_forward", "_scaled_dot_product_attention_math",
                                     "MultiheadAttention"),
    "MultiheadAttention": ("multi_head_attention_forward",),
    "layer_norm": ("native_layer_norm",),
    "batch_norm": ("native_batch_norm", "_batch_norm_impl_index"),
}
_bans: contextvars.ContextVar = contextvars.ContextVar("mha_check_bans", default=None)
_paused = threading.local()


def _library_folders() -> tuple[str, ...]:
    import sysconfig

    folders = {os.path.dirname(os.path.dirname(os.path.abspath(__file__))),   # mha
               os.path.dirname(os.path.abspath(torch.__file__))}
    folders |= {os.path.abspath(p) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                if (p := sysconfig.get_paths().get(key))}
    return tuple(folder + os.sep for folder in folders)


_LIBRARY = _library_folders()


def _learners(value) -> bool:
    """Whether ``value`` is a function or class the notebook itself defines."""
    return callable(value) and getattr(value, "__module__", None) == "__main__"


def _unrecorded(value):
    """``value`` (a correct version the grader hands to the learner's code), not recorded."""
    if not callable(value) or isinstance(value, type) or callable(getattr(type(value), "notebook_module", None)):
        return value

    def unrecorded(*args, **kwargs):
        _paused.depth = getattr(_paused, "depth", 0) + 1
        try:
            return value(*args, **kwargs)
        finally:
            _paused.depth -= 1
    unrecorded.__name__ = getattr(value, "__name__", "reference")
    return unrecorded


@contextlib.contextmanager
def _recording(fn):
    """Record the library functions executed in the block (a set of names, yielded), when the
    current test case has bans and ``fn`` runs here (not in a sandbox); else yield None."""
    if not _bans.get() or callable(getattr(type(fn), "notebook_module", None)):
        yield None
        return
    executed: set[str] = set()
    learners: dict = {}

    def by_learner(frame) -> bool:
        """Whether ``frame`` runs the learner's own code (a notebook cell: module ``__main__``),
        not a library's (nor code a library generated, such as a dataclass's ``__init__``), a
        test file's or this module's: only what the learner's code calls is recorded (a
        correct version of an earlier answer may use anything)."""
        code = frame.f_code
        if code not in learners:
            name = code.co_filename
            learners[code] = frame.f_globals.get("__name__") == "__main__" and not (
                os.path.abspath(name).startswith(_LIBRARY) or _TEST_FILE.search(name)
                or name.startswith("<frozen"))
        return learners[code]

    def profile(frame, event, arg):
        if getattr(_paused, "depth", 0):
            return
        if event == "c_call" and by_learner(frame):
            name = getattr(arg, "__name__", None)
            if isinstance(name, str):
                executed.add(name)
                owner = getattr(arg, "__module__", None) or type(getattr(arg, "__self__", None)).__name__
                executed.add(f"{owner}.{name}")
        elif event == "call" and frame.f_back is not None and by_learner(frame.f_back) \
                and not by_learner(frame):
            code = frame.f_code
            qualified = getattr(code, "co_qualname", code.co_name)
            executed.update(qualified.split("."))
            executed.add(f"{frame.f_globals.get('__name__', '')}.{qualified}")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield executed
    finally:
        sys.setprofile(previous)


def _executed_match(bad: str, executed: set[str]) -> str | None:
    """The executed function that ``bad`` bans (itself or an alias), or None."""
    if "." not in bad:
        for name in (bad, *ALIASES.get(bad, ())):
            if name in executed:
                return name
        return None
    last = bad.rsplit(".", 1)[1]
    for name in executed:  # `mha.split_heads` bans `mha.heads.split_heads`; `mha.gpt` all of it
        if f".{bad}." in f".{name}." or (
                bad.startswith("mha.") and name.startswith("mha.") and last in name.split(".")[1:]):
            return name
    return None


def _check_bans(executed: set[str] | None) -> None:
    for name, reasons in _bans.get() or ():
        for bad, why in reasons.items():
            found = None if executed is None else _executed_match(bad, executed)
            if found is not None:
                raise CheckFailed(_say(f"`{name}` uses `{bad}` (your code called `{found}`): {why}",
                                       f"`{name}` 用到了 `{bad}`（你的代码调用了 `{found}`）：{why}"))


@contextlib.contextmanager
def banning():
    """Within the block, ``forbid``'s bans also apply to what ``call`` executes (each test case
    of ``run_test_file`` runs in one)."""
    token = _bans.set([])
    try:
        yield
    finally:
        _bans.reset(token)


# ----------------------------------------------------------------------------- comparing

def _matches(got: torch.Tensor, candidate, atol: float, rtol: float) -> bool:
    if callable(candidate) and not isinstance(candidate, torch.Tensor):
        try:
            return bool(candidate(got))
        except Exception:
            return False
    if not isinstance(candidate, torch.Tensor) or candidate.shape != got.shape:
        return False
    if candidate.dtype == torch.bool or got.dtype == torch.bool:
        return bool(torch.equal(got.bool(), candidate.bool()))
    g, c = got.detach().double(), candidate.detach().double()
    return bool(torch.allclose(g, c, atol=atol, rtol=rtol, equal_nan=True))


def _hint_lines(got, hints, atol, rtol) -> str:
    lines = [_hint(message) for candidate, message in hints if _matches(got, candidate, atol, rtol)]
    return "".join(dict.fromkeys(lines))


def _translated_hints(hints):
    # Every hint, not only the one shown: a run in Chinese then finds every missing translation.
    return [(candidate, translate(message)) for candidate, message in hints]


def check_tensor(got, expected: torch.Tensor, what: str, hints=(), *, atol: float = 1e-5,
                 rtol: float = 1e-4) -> None:
    """Compare the learner's result ``got`` with the reference ``expected``.

    ``hints`` is a list of ``(candidate, message)``: when ``got`` equals ``candidate`` (a
    tensor: what a classic mistake produces) or ``candidate(got)`` is true (a function), the
    message is shown. The failure message names ``what`` was checked.
    """
    what, hints = translate(what), _translated_hints(hints)
    if got is None:
        raise CheckFailed(_say(
            f"{what} returned None. The stub still ends with `return None`: replace it with "
            f"your implementation.",
            f"{what} 返回了 None。模板代码仍以 `return None` 结尾：请把它换成你的实现。"))
    if isinstance(got, tuple) and not isinstance(expected, tuple):
        raise CheckFailed(_say(
            f"{what}: expected a single tensor {shape_str(expected.shape)}, got a tuple of "
            f"{len(got)} items.",
            f"{what}：应当返回一个张量 {shape_str(expected.shape)}，得到的却是含 {len(got)} 项的元组。"))
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(_say(f"{what}: expected a torch.Tensor, got {describe(got)}.",
                               f"{what}：应当返回 torch.Tensor，得到的却是 {describe(got)}。"))
    if got.shape != expected.shape:
        raise CheckFailed(_say(
            f"{what}: wrong shape, expected {shape_str(expected.shape)}, got "
            f"{shape_str(got.shape)}.",
            f"{what}：形状错误，应为 {shape_str(expected.shape)}，得到 {shape_str(got.shape)}。"
        ) + _hint_lines(got, hints, atol, rtol))
    if expected.dtype == torch.bool:
        if got.dtype != torch.bool:
            raise CheckFailed(_say(
                f"{what}: expected a boolean tensor (True = this query may attend to this key), "
                f"got dtype {got.dtype}. Build it from a comparison or call .bool() on it.",
                f"{what}：应当是布尔张量（True = 这个查询可以关注这个键），得到的 dtype 却是 "
                f"{got.dtype}。请用比较运算构造它，或对它调用 .bool()。"
            ) + _hint_lines(got, hints, atol, rtol))
    if expected.dtype in (torch.bool, torch.int64, torch.int32) and not got.dtype.is_floating_point:
        # Exact values (a mask, token ids): the first wrong position, as True/False or an integer.
        value = bool if expected.dtype == torch.bool else int
        wrong = got.long() != expected.long()
        if wrong.any():
            flat = int(wrong.flatten().nonzero()[0])
            where = _index_str(flat, got.shape)
            want, have = value(expected.flatten()[flat]), value(got.flatten()[flat])
            raise CheckFailed(_say(
                f"{what}: wrong at {int(wrong.sum())} of {got.numel()} positions; the first "
                f"is {where}: expected {want}, got {have}.",
                f"{what}：{got.numel()} 个位置中有 {int(wrong.sum())} 个错误；第一个在 {where}："
                f"应为 {want}，得到 {have}。"
            ) + _hint_lines(got, hints, atol, rtol))
        return
    if got.dtype == torch.bool:
        raise CheckFailed(_say(f"{what}: expected numbers, got a boolean tensor.",
                               f"{what}：应当是数值，得到的却是布尔张量。"))
    g, e = got.detach().double(), expected.detach().double()
    bad_nan = torch.isnan(g) & ~torch.isnan(e)
    if bad_nan.any():
        flat = int(bad_nan.flatten().nonzero()[0])
        where, want = _index_str(flat, g.shape), _num(float(e.flatten()[flat]))
        raise CheckFailed(_say(
            f"{what}: NaN at {int(bad_nan.sum())} of {g.numel()} positions, the first "
            f"at {where} (expected {want}).",
            f"{what}：{g.numel()} 个位置中有 {int(bad_nan.sum())} 个是 NaN，第一个在 {where}"
            f"（应为 {want}）。"
        ) + _hint_lines(got, hints, atol, rtol))
    error = (g - e).abs()
    error = torch.where(torch.isnan(g) & torch.isnan(e), torch.zeros_like(error), error)
    error = torch.where(torch.isinf(e) & (g == e), torch.zeros_like(error), error)
    tolerance = atol + rtol * e.abs().nan_to_num(posinf=0.0, neginf=0.0)
    wrong = error > tolerance
    if wrong.any():
        flat = int(torch.where(wrong, error, torch.zeros_like(error)).flatten().argmax())
        where = _index_str(flat, g.shape)
        largest = _num(float(error.flatten()[flat]))
        want, have = _num(float(e.flatten()[flat])), _num(float(g.flatten()[flat]))
        raise CheckFailed(_say(
            f"{what}: wrong values at {int(wrong.sum())} of {g.numel()} positions. "
            f"Largest error {largest} at index {where}: expected {want}, got {have}.",
            f"{what}：{g.numel()} 个位置中有 {int(wrong.sum())} 个数值错误。"
            f"最大误差 {largest}，在下标 {where}：应为 {want}，得到 {have}。"
        ) + _hint_lines(got, hints, atol, rtol))


def check_tuple(got, what: str, names: tuple[str, ...]):
    """The learner's function must return a tuple of ``len(names)`` items; return them."""
    listed = ", ".join(names)
    what = translate(what)
    if got is None:
        raise CheckFailed(_say(
            f"{what} returned None. The stub still ends with `return None`: replace it with "
            f"your implementation, which returns ({listed}).",
            f"{what} 返回了 None。模板代码仍以 `return None` 结尾：请把它换成你的实现，"
            f"返回 ({listed})。"))
    if not isinstance(got, (tuple, list)) or len(got) != len(names):
        raise CheckFailed(_say(f"{what} should return the {len(names)} items ({listed}); got "
                               f"{describe(got)}.",
                               f"{what} 应当返回 {len(names)} 项 ({listed})；得到的却是 "
                               f"{describe(got)}。"))
    return tuple(got)


def check_pair(got, what: str, first: str = "out", second: str = "weights"):
    """The learner's function must return ``(first, second)``; return the two items."""
    return check_tuple(got, what, (first, second))


def check_equal(got, expected, what: str, hints=()) -> None:
    """Exact comparison for plain Python values (ints, strings, tuples)."""
    what, hints = translate(what), _translated_hints(hints)
    if got is None and expected is not None:
        raise CheckFailed(_say(
            f"{what} returned None. The stub still ends with `return None`: replace it with "
            f"your implementation.",
            f"{what} 返回了 None。模板代码仍以 `return None` 结尾：请把它换成你的实现。"))
    if hasattr(got, "item") and not isinstance(got, torch.Tensor) and \
            isinstance(expected, (bool, int, float)):
        got = got.item()  # a numpy scalar (np.int64(6)) is the number it holds
    if got != expected:
        extra = "".join(_hint(message) for candidate, message in hints
                        if (candidate(got) if callable(candidate) else candidate == got))
        raise CheckFailed(_say(f"{what}: expected {expected!r}, got {got!r}.",
                               f"{what}：应为 {expected!r}，得到 {got!r}。") + extra)


# ----------------------------------------------------------------------------- inputs

def randn(*shape: int, seed: int) -> torch.Tensor:
    """Reproducible standard-normal tensor (independent of the global RNG)."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def random_sizes(seed: int, count: int, low: int = 1, high: int = 9) -> list[int]:
    """``count`` reproducible integers in ``[low, high)``."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, (count,), generator=generator).tolist()


def running_example(d_model: int = 8, seed: int = 0):
    """The course's running example: ``x`` [1, 6, d] ("the cat sat on the mat") and
    ``memory`` [1, 7, d] (its French translation), plus three projections [d, d]."""
    from mha.course.example import SENTENCE, TRANSLATION, embed

    x = embed(SENTENCE, d_model=d_model, seed=seed)[None]
    memory = embed(TRANSLATION, d_model=d_model, seed=seed)[None]
    generator = torch.Generator().manual_seed(seed)
    w_q, w_k, w_v = (torch.randn(d_model, d_model, generator=generator) / math.sqrt(d_model)
                     for _ in range(3))
    return x, memory, w_q, w_k, w_v


# ----------------------------------------------------------------------------- running a test file

@dataclass
class CaseResult:
    """One test case of a question: its name, whether it is hidden, passed, the feedback, and
    the kind of error that failed it (``CheckFailed`` when a check caught the mistake)."""
    name: str
    hidden: bool
    passed: bool
    message: str
    error: str = ""


def _raised_here(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in this module (its message is then in the current language
    already), rather than by a test file's own ``raise``."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename) == os.path.abspath(__file__)


def failure_message(exc: BaseException) -> str:
    """What the learner reads when a test case fails: a ``CheckFailed``'s own message (the
    input, expected against got, and a hint), never the test's internals (its line number and
    source). Any other error means the check itself could not go on with what it got."""
    if isinstance(exc, CheckFailed):
        text = str(exc).strip()
        return text if _raised_here(exc) else translate(text)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = translate(text, record=False)  # a test's own words; Python's and torch's stay English
    return _say(f"the check could not use what your code returned: {type(exc).__name__}: {text}",
                f"检查无法使用你的代码返回的结果：{type(exc).__name__}：{text}")


def run_test_file(path, env: dict, language: str | None = None):
    """Run every test case of the otter test file ``path`` against the notebook namespace ``env``.

    Returns ``(test_file, results)``: otter's test-file object, whose ``score`` and
    ``possible`` then hold the question's points, and one :class:`CaseResult` per test case.
    ``language`` ('en' or 'zh'; None: the current one) is the language of the messages.
    """
    with messages_in(language):
        return _run_test_file(path, env)


def _run_test_file(path, env: dict):
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file
    from otter.test_files.abstract_test import TestCaseResult

    test = create_test_file(str(path), NBMetadataConfig())
    test.test_case_results, results = [], []
    for case in test.test_cases:
        try:
            with banning():
                case.body.call_func(env)
            passed, message, error = True, "", ""
        except Exception as exc:
            passed, message, error = False, failure_message(exc), type(exc).__name__
        test.test_case_results.append(TestCaseResult(test_case=case, message=message, passed=passed))
        results.append(CaseResult(case.body.test_func.__name__, bool(case.hidden), passed, message,
                                  error))
    return test, results


class CheckResult:
    """What a check cell shows: every failed test case's feedback, or that all passed."""

    def __init__(self, question: str, results: list[CaseResult], language: str = "en"):
        self.question, self.results, self.language = question, results, _check_language(language)

    def _text(self, en: str, zh: str) -> str:
        return zh if self.language == "zh" else en

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def _failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def __repr__(self) -> str:
        if self.passed:
            return self._text(f"{self.question} results: All test cases passed!",
                              f"{self.question} 结果：所有测试用例均已通过！")
        lines = [self._text(f"{self.question} results:", f"{self.question} 结果：")]
        for r in self._failures():
            lines.append(self._text("    ❌ Test case failed", "    ❌ 测试用例未通过"))
            lines += ["    " + line for line in r.message.splitlines()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # Dark green and dark red: readable on white and grey (WCAG AA contrast >= 4.5).
        question = html.escape(self.question)
        if self.passed:
            return (f"<p><strong style='color: #0b5d1e;'>" + self._text(
                f"{question} results: All test cases passed!", f"{question} 结果：所有测试用例均已通过！")
                + "</strong></p>")
        parts = [f"<p><strong style='color: #a50e0e;'>"
                 + self._text(f"{question} results:", f"{question} 结果：") + "</strong></p>"]
        failed = self._text("❌ Test case failed", "❌ 测试用例未通过")
        for r in self._failures():
            parts.append(f"<pre>{failed}\n{html.escape(r.message)}</pre>")
        return "".join(parts)


class Notebook:
    """The check cells' grader: ``grader = Notebook(tests_dir="tests")``, then
    ``grader.check("q1")`` runs the public tests ``tests/q1.py`` against the notebook.
    ``language="zh"`` (the Chinese notebooks' checks cell) gives the feedback in Chinese."""

    def __init__(self, tests_dir: str = "tests", language: str = "en"):
        self.tests_dir = Path(tests_dir)
        self.language = _check_language(language)

    def check(self, question: str, env: dict | None = None) -> CheckResult:
        if env is None:
            env = inspect.currentframe().f_back.f_globals  # the notebook's namespace
        path = self.tests_dir / f"{question}.py"
        if not path.exists():
            raise FileNotFoundError(self._text(
                f"{path} not found: run the notebook's first cell (on Colab it downloads the "
                f"tests) from the exercise's folder.",
                f"找不到 {path}：请在练习所在的文件夹中运行 notebook 的第一个单元（在 Colab 上它会下载测试）。"))
        _, results = run_test_file(path, env, language=self.language)
        return CheckResult(question, results, self.language)

    def _text(self, en: str, zh: str) -> str:
        return zh if self.language == "zh" else en


_FAILED = "    ❌ Test case failed"


def _parse_check_result(text: str) -> CheckResult:
    """The English ``CheckResult`` whose ``repr`` is ``text`` (a check cell's stored output)."""
    first, *lines = text.split("\n")
    match = re.fullmatch(r"(\S+) results:( All test cases passed!)?", first)
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
    joined = {key: "".join(value) if isinstance(value, list) else value for key, value in data.items()}
    result = _parse_check_result(joined["text/plain"])
    rendered = {"text/plain": repr(result), "text/html": result._repr_html_()}
    if set(joined) != set(rendered) or any(joined[key] != rendered[key] for key in rendered):
        raise ValueError(f"not the output of this module's CheckResult: {joined['text/plain'][:200]!r}")
    if _check_language(language) == "en":
        return rendered
    results = [CaseResult(r.name, r.hidden, r.passed, translate_feedback(r.message)) for r in result.results]
    translated = CheckResult(result.question, results, language)
    return {"text/plain": repr(translated), "text/html": translated._repr_html_()}
