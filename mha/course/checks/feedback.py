"""The feedback of a check: compare the learner's result with the reference, and say what is wrong.

A failing check tells the learner what to fix: which function, with which input shapes, the
expected and the actual shape, the largest numerical error and where it is, and a hint when the
answer matches a classic mistake (``//`` instead of ``/``, an inverted mask, a softmax over the
wrong axis, heads split with the wrong layout, ...: the catalogue ``mha.course.mistakes``).
``failure_message`` is what a failed test case shows (never the test's source line), and
``CheckResult`` what a check cell shows.
"""
from __future__ import annotations

import dataclasses
import html
import math
import os
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

from mha.course.checks.language import PACKAGE, _check_language, _say, translate


class CheckFailed(AssertionError):
    """A check failed; the message says what was expected, what came back and what to try."""


def _hint(text: str) -> str:
    return _say(f"\n  Hint: {text}", f"\n  提示：{text}")


# ----------------------------------------------------------------------------- formatting

def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def describe(value) -> str:
    """Short description of an argument or a result for a message."""
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            return _say(f"bool tensor {shape_str(value.shape)}", f"布尔张量 {shape_str(value.shape)}")
        return _say(f"tensor {shape_str(value.shape)}", f"张量 {shape_str(value.shape)}")
    if isinstance(value, torch.nn.Module) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        return type(value).__name__  # a model or a batch: its fields would fill the message
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


# ----------------------------------------------------------------------------- a test case's result

@dataclass
class CaseResult:
    """One test case of a question: its name, whether it is hidden, passed, the feedback, and
    the kind of error that failed it (``CheckFailed`` when a check caught the mistake). A
    passed case's ``message`` is its notes (``note``: what it did not check, what it measured),
    usually empty."""
    name: str
    hidden: bool
    passed: bool
    message: str
    error: str = ""


def _raised_here(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by the checks (its message is then in the current language
    already), rather than by a test file's own ``raise``."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and Path(os.path.realpath(frames[-1].filename)).parent == PACKAGE


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


class CheckResult:
    """What a check cell shows: every failed test case's feedback, or that all passed. A
    question whose checks leave something to the grade (a prediction, a multiple choice) or
    report a measurement passes with its notes: "The checks passed. Note:", never "All test
    cases passed!" about something no check here looked at."""

    def __init__(self, question: str, results: list[CaseResult], language: str = "en"):
        self.question, self.results, self.language = question, results, _check_language(language)

    def _text(self, en: str, zh: str) -> str:
        return zh if self.language == "zh" else en

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def _failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def _notes(self) -> list[str]:
        return [r.message for r in self.results if r.passed and r.message]

    def __repr__(self) -> str:
        if self.passed and not self._notes():
            return self._text(f"{self.question} results: All test cases passed!",
                              f"{self.question} 结果：所有测试用例均已通过！")
        if self.passed:
            lines = [self._text(f"{self.question} results: The checks passed. Note:",
                                f"{self.question} 结果：检查已通过。请注意：")]
            for note in self._notes():
                lines += ["    ⓘ " + line if i == 0 else "      " + line
                          for i, line in enumerate(note.splitlines())]
            return "\n".join(lines)
        lines = [self._text(f"{self.question} results:", f"{self.question} 结果：")]
        for r in self._failures():
            lines.append(self._text("    ❌ Test case failed", "    ❌ 测试用例未通过"))
            lines += ["    " + line for line in r.message.splitlines()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # Dark green and dark red: readable on white and grey (WCAG AA contrast >= 4.5).
        question = html.escape(self.question)
        if self.passed and not self._notes():
            return (f"<p><strong style='color: #0b5d1e;'>" + self._text(
                f"{question} results: All test cases passed!", f"{question} 结果：所有测试用例均已通过！")
                + "</strong></p>")
        if self.passed:
            return (f"<p><strong style='color: #0b5d1e;'>" + self._text(
                f"{question} results: The checks passed. Note:", f"{question} 结果：检查已通过。请注意：")
                + "</strong></p>" + "".join(f"<pre>ⓘ {html.escape(note)}</pre>" for note in self._notes()))
        parts = [f"<p><strong style='color: #a50e0e;'>"
                 + self._text(f"{question} results:", f"{question} 结果：") + "</strong></p>"]
        failed = self._text("❌ Test case failed", "❌ 测试用例未通过")
        for r in self._failures():
            parts.append(f"<pre>{failed}\n{html.escape(r.message)}</pre>")
        return "".join(parts)

