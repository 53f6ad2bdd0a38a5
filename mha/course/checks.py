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
"""
from __future__ import annotations

import ast
import contextlib
import html
import inspect
import math
import os
import signal
import textwrap
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

# Each call of a learner's function gets this many seconds (an infinite loop then fails its
# question instead of hanging the notebook or the grader).
TIME_LIMIT = float(os.environ.get("MHA_CHECK_TIME_LIMIT", "20"))


class CheckFailed(AssertionError):
    """A check failed; the message says what was expected, what came back and what to try."""


class _TimeLimit(BaseException):
    """Raised inside the learner's code when its time is up (a BaseException, so that a bare
    ``except Exception`` in the learner's code does not swallow it)."""


# ----------------------------------------------------------------------------- formatting

def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def describe(value) -> str:
    """Short description of an argument or a result for a message."""
    if isinstance(value, torch.Tensor):
        kind = "bool " if value.dtype == torch.bool else ""
        return f"{kind}tensor {shape_str(value.shape)}"
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


def _learner_line(exc: BaseException) -> str:
    """``line N: <code>`` of the deepest frame that is not torch's or this module's."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = os.path.abspath(__file__)
    best = None
    for frame in frames:
        name = frame.filename
        if os.path.abspath(name) == mine or f"{os.sep}torch{os.sep}" in name:
            continue
        if f"{os.sep}site-packages{os.sep}" in name or name.startswith("<frozen"):
            continue
        best = frame
    if best is None or not best.line:
        return ""
    return f"\n  in your code, function {best.name}: `{best.line.strip()}`"


def call(fn, name: str, *args, error_hints=(), **named):
    """Call the learner's ``fn`` with a time limit and turn any failure into feedback.

    Positional ``args`` are passed as they are; ``named`` arguments are passed positionally in
    the order given, and their names appear in the messages (``attention(q [2, 4, 8], ...)``).
    ``error_hints`` is a list of ``(text, hint)``: when the learner's code raises an error
    whose message contains ``text``, the hint is added to the feedback.
    """
    if fn is None:
        raise CheckFailed(
            f"`{name}` is not defined. Run the cell that defines it (and every cell above it) "
            f"before running this check."
        )
    if not callable(fn):
        raise CheckFailed(f"`{name}` should be a function or a class, got {describe(fn)}.")
    shown = ", ".join([describe(a) for a in args] + [f"{k} {describe(v)}" for k, v in named.items()])
    signature = f"{name}({shown})"
    try:
        with time_limit(TIME_LIMIT):
            return fn(*args, *named.values())
    except _TimeLimit:
        raise CheckFailed(
            f"{signature} did not finish within {TIME_LIMIT:g} s. Is there an infinite loop "
            f"(a `while` whose condition never becomes false)?"
        ) from None
    except CheckFailed:
        raise
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = f"{signature} raised {type(exc).__name__}: {message}{_learner_line(exc)}"
        if isinstance(exc, NotImplementedError):
            text += "\n  Hint: replace the `raise NotImplementedError` with your implementation."
        for needle, hint in error_hints:
            if needle in str(exc):
                text += f"\n  Hint: {hint}"
        raise CheckFailed(text) from None


def check_raises(fn, name: str, error: type, *args, why: str = "", **named) -> None:
    """The learner's ``fn`` must raise ``error`` (e.g. ``ValueError``) for this input; ``why``
    says in the learner's words why the input is invalid."""
    shown = ", ".join([describe(a) for a in args] + [f"{k} {describe(v)}" for k, v in named.items()])
    signature = f"{name}({shown})"
    if fn is None:
        raise CheckFailed(f"`{name}` is not defined. Run the cell that defines it (and every cell "
                          f"above it) before running this check.")
    try:
        with time_limit(TIME_LIMIT):
            result = fn(*args, *named.values())
    except _TimeLimit:
        raise CheckFailed(f"{signature} did not finish within {TIME_LIMIT:g} s.") from None
    except error:
        return
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise CheckFailed(f"{signature} should raise {error.__name__} ({why}); it raised "
                          f"{type(exc).__name__}: {message}{_learner_line(exc)}") from None
    raise CheckFailed(f"{signature} should raise {error.__name__} ({why}); it returned "
                      f"{describe(result)}.")


def check_test_catches(test_fn, name: str, correct, buggy) -> None:
    """Grade a test the learner wrote: ``test_fn(implementation)`` must pass (return) on every
    ``(label, implementation)`` in ``correct`` and fail (raise, e.g. an ``AssertionError``) on
    every one in ``buggy``."""
    if test_fn is None:
        raise CheckFailed(f"`{name}` is not defined. Run the cell that defines it (and every cell "
                          f"above it) before running this check.")
    if not callable(test_fn):
        raise CheckFailed(f"`{name}` should be a function, got {describe(test_fn)}.")

    def failure(implementation):
        """None when the learner's test passes, else what it raised."""
        try:
            with time_limit(TIME_LIMIT):
                test_fn(implementation)
        except _TimeLimit:
            raise CheckFailed(f"{name} did not finish within {TIME_LIMIT:g} s.") from None
        except Exception as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return f"{type(exc).__name__}: {message}".rstrip(": ") + _learner_line(exc)
        return None

    for label, implementation in correct:
        error = failure(implementation)
        if error is not None:
            raise CheckFailed(f"{name}(attention) fails on a correct attention ({label}): {error}\n"
                              f"  Hint: a test must pass on correct code; compare with a trusted "
                              f"reference, with tolerances for rounding (torch.allclose).")
    for label, implementation in buggy:
        if failure(implementation) is None:
            raise CheckFailed(f"{name}(attention) passes on {label}: a test that catches this bug "
                              f"must fail on it (raise, e.g. with assert). A function that "
                              f"returned None without asserting anything checks nothing.")


@contextlib.contextmanager
def reference(env: dict, **implementations):
    """Grade one question at a time: while the block runs, the learner's helpers named in
    ``implementations`` (answers to earlier questions) are replaced by correct versions in the
    notebook's namespace ``env``, so a mistake is only counted in the question it belongs to."""
    missing = object()
    saved = {name: env.get(name, missing) for name in implementations}
    env.update(implementations)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                env.pop(name, None)
            else:
                env[name] = value


def forbid(fn, name: str, banned: dict[str, str]) -> None:
    """Fail if the source of ``fn`` uses one of the ``banned`` names (``{"softmax": why}``).

    A plain name matches any use of it: ``"softmax"`` catches ``torch.softmax``,
    ``F.softmax``, ``x.softmax`` and a bare ``softmax``. A dotted name matches that spelling
    (``"mha.split_heads"`` catches ``mha.split_heads`` and ``from mha import split_heads``
    inside the function) but not a bare ``split_heads``, which may be the learner's own.
    """
    if fn is None:
        return
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return  # no source available (e.g. defined by exec): nothing to check
    used = set()
    for node in ast.walk(tree):
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
    for bad, why in banned.items():
        if bad in used or any(u.endswith("." + bad) for u in used):
            raise CheckFailed(f"`{name}` uses `{bad}`: {why}")


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
    lines = [f"\n  Hint: {message}" for candidate, message in hints
             if _matches(got, candidate, atol, rtol)]
    return "".join(dict.fromkeys(lines))


def check_tensor(got, expected: torch.Tensor, what: str, hints=(), *, atol: float = 1e-5,
                 rtol: float = 1e-4) -> None:
    """Compare the learner's result ``got`` with the reference ``expected``.

    ``hints`` is a list of ``(candidate, message)``: when ``got`` equals ``candidate`` (a
    tensor: what a classic mistake produces) or ``candidate(got)`` is true (a function), the
    message is shown. The failure message names ``what`` was checked.
    """
    if got is None:
        raise CheckFailed(
            f"{what} returned None. The stub still ends with `return None`: replace it with "
            f"your implementation."
        )
    if isinstance(got, tuple) and not isinstance(expected, tuple):
        raise CheckFailed(
            f"{what}: expected a single tensor {shape_str(expected.shape)}, got a tuple of "
            f"{len(got)} items."
        )
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"{what}: expected a torch.Tensor, got {describe(got)}.")
    if got.shape != expected.shape:
        raise CheckFailed(
            f"{what}: wrong shape, expected {shape_str(expected.shape)}, got "
            f"{shape_str(got.shape)}.{_hint_lines(got, hints, atol, rtol)}"
        )
    if expected.dtype == torch.bool:
        if got.dtype != torch.bool:
            raise CheckFailed(
                f"{what}: expected a boolean tensor (True = this query may attend to this key), "
                f"got dtype {got.dtype}. Build it from a comparison or call .bool() on it."
                f"{_hint_lines(got, hints, atol, rtol)}"
            )
        wrong = got != expected
        if wrong.any():
            flat = int(wrong.flatten().nonzero()[0])
            where = _index_str(flat, got.shape)
            raise CheckFailed(
                f"{what}: wrong at {int(wrong.sum())} of {got.numel()} positions; the first "
                f"is {where}: expected {bool(expected.flatten()[flat])}, got "
                f"{bool(got.flatten()[flat])}.{_hint_lines(got, hints, atol, rtol)}"
            )
        return
    if expected.dtype in (torch.int64, torch.int32) and not got.dtype.is_floating_point:
        wrong = got.long() != expected.long()
        if wrong.any():
            flat = int(wrong.flatten().nonzero()[0])
            raise CheckFailed(
                f"{what}: wrong at {int(wrong.sum())} of {got.numel()} positions; the first "
                f"is {_index_str(flat, got.shape)}: expected {int(expected.flatten()[flat])}, "
                f"got {int(got.flatten()[flat])}.{_hint_lines(got, hints, atol, rtol)}"
            )
        return
    if got.dtype == torch.bool:
        raise CheckFailed(f"{what}: expected numbers, got a boolean tensor.")
    g, e = got.detach().double(), expected.detach().double()
    bad_nan = torch.isnan(g) & ~torch.isnan(e)
    if bad_nan.any():
        flat = int(bad_nan.flatten().nonzero()[0])
        raise CheckFailed(
            f"{what}: NaN at {int(bad_nan.sum())} of {g.numel()} positions, the first "
            f"at {_index_str(flat, g.shape)} (expected {_num(float(e.flatten()[flat]))})."
            f"{_hint_lines(got, hints, atol, rtol)}"
        )
    error = (g - e).abs()
    error = torch.where(torch.isnan(g) & torch.isnan(e), torch.zeros_like(error), error)
    error = torch.where(torch.isinf(e) & (g == e), torch.zeros_like(error), error)
    tolerance = atol + rtol * e.abs().nan_to_num(posinf=0.0, neginf=0.0)
    wrong = error > tolerance
    if wrong.any():
        flat = int(torch.where(wrong, error, torch.zeros_like(error)).flatten().argmax())
        raise CheckFailed(
            f"{what}: wrong values at {int(wrong.sum())} of {g.numel()} positions. "
            f"Largest error {_num(float(error.flatten()[flat]))} at index "
            f"{_index_str(flat, g.shape)}: expected {_num(float(e.flatten()[flat]))}, got "
            f"{_num(float(g.flatten()[flat]))}.{_hint_lines(got, hints, atol, rtol)}"
        )


def check_tuple(got, what: str, names: tuple[str, ...]):
    """The learner's function must return a tuple of ``len(names)`` items; return them."""
    listed = ", ".join(names)
    if got is None:
        raise CheckFailed(
            f"{what} returned None. The stub still ends with `return None`: replace it with "
            f"your implementation, which returns ({listed})."
        )
    if not isinstance(got, (tuple, list)) or len(got) != len(names):
        raise CheckFailed(f"{what} should return the {len(names)} items ({listed}); got "
                          f"{describe(got)}.")
    return tuple(got)


def check_pair(got, what: str, first: str = "out", second: str = "weights"):
    """The learner's function must return ``(first, second)``; return the two items."""
    return check_tuple(got, what, (first, second))


def check_equal(got, expected, what: str, hints=()) -> None:
    """Exact comparison for plain Python values (ints, strings, tuples)."""
    if got is None and expected is not None:
        raise CheckFailed(
            f"{what} returned None. The stub still ends with `return None`: replace it with "
            f"your implementation."
        )
    if got != expected:
        extra = "".join(f"\n  Hint: {message}" for candidate, message in hints
                        if (candidate(got) if callable(candidate) else candidate == got))
        raise CheckFailed(f"{what}: expected {expected!r}, got {got!r}.{extra}")


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


def failure_message(exc: BaseException) -> str:
    """What the learner reads when a test case fails: a ``CheckFailed``'s own message (the
    input, expected against got, and a hint), never the test's internals (its line number and
    source). Any other error means the check itself could not go on with what it got."""
    if isinstance(exc, CheckFailed):
        return str(exc).strip()
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"the check could not use what your code returned: {type(exc).__name__}: {text}"


def run_test_file(path, env: dict):
    """Run every test case of the otter test file ``path`` against the notebook namespace ``env``.

    Returns ``(test_file, results)``: otter's test-file object, whose ``score`` and
    ``possible`` then hold the question's points, and one :class:`CaseResult` per test case.
    """
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file
    from otter.test_files.abstract_test import TestCaseResult

    test = create_test_file(str(path), NBMetadataConfig())
    test.test_case_results, results = [], []
    for case in test.test_cases:
        try:
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

    def __init__(self, question: str, results: list[CaseResult]):
        self.question, self.results = question, results

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def _failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def __repr__(self) -> str:
        if self.passed:
            return f"{self.question} results: All test cases passed!"
        lines = [f"{self.question} results:"]
        for r in self._failures():
            lines.append("    ❌ Test case failed")
            lines += ["    " + line for line in r.message.splitlines()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # Dark green and dark red: readable on white and grey (WCAG AA contrast >= 4.5).
        if self.passed:
            return (f"<p><strong style='color: #0b5d1e;'>{html.escape(self.question)} results: "
                    f"All test cases passed!</strong></p>")
        parts = [f"<p><strong style='color: #a50e0e;'>{html.escape(self.question)} "
                 f"results:</strong></p>"]
        for r in self._failures():
            parts.append(f"<pre>❌ Test case failed\n{html.escape(r.message)}</pre>")
        return "".join(parts)


class Notebook:
    """The check cells' grader: ``grader = Notebook(tests_dir="tests")``, then
    ``grader.check("q1")`` runs the public tests ``tests/q1.py`` against the notebook."""

    def __init__(self, tests_dir: str = "tests"):
        self.tests_dir = Path(tests_dir)

    def check(self, question: str, env: dict | None = None) -> CheckResult:
        if env is None:
            env = inspect.currentframe().f_back.f_globals  # the notebook's namespace
        path = self.tests_dir / f"{question}.py"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: run the notebook's first cell (on Colab it "
                                    f"downloads the tests) from the exercise's folder.")
        _, results = run_test_file(path, env)
        return CheckResult(question, results)
