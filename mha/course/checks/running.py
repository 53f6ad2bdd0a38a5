"""Running the learner's code for a check: time limits, bans, correct earlier answers, test files.

``call`` runs one of the learner's functions with a time limit and turns any failure into
feedback; ``forbid`` refuses an answer that is a library's function or that uses what a question
bans, by its source and by what it executes (``recording``: the library functions the learner's
code calls while ``call`` runs it); ``reference`` hands correct versions of earlier answers to
the learner's code. ``run_test_file(path, env)`` runs an otter test file against a notebook
namespace and returns one ``CaseResult`` per test case; the check cells of the student notebooks
use ``Notebook(tests_dir)``, whose ``check("qN")`` shows those results. The grader
(``grading.worker``) runs the same test files, with the learner's names as proxies of objects in
its sandbox (``grading.sandbox.Remote``): a call of one runs there, recorded there when bans apply.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import inspect
import os
import re
import signal
import sys
import textwrap
import threading
import traceback
from pathlib import Path

import torch

from mha.course import checks as settings  # TIME_LIMIT, read at each call (tests change it)
from mha.course.checks.feedback import CaseResult, CheckFailed, CheckResult, _hint, describe, failure_message
from mha.course.checks.language import _check_language, _say, messages_in, translate


class _TimeLimit(BaseException):
    """Raised inside the learner's code when its time is up (a BaseException, so that a bare
    ``except Exception`` in the learner's code does not swallow it)."""



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


def _in_learners_cell(frame) -> bool:
    """Whether ``frame`` runs code of the learner's cells: code whose globals are the notebook's
    namespace (``__main__``), and that is not a library's (torch, mha and these checks, the
    standard library, site-packages) nor a test file's (``tests/qN.py``: the test's own lambda
    is not "your code"). In the grader, the frame that stands for the learner's line
    (``grading.sandbox``) is one too; the grader's own frames never are."""
    name = frame.f_code.co_filename
    if frame.f_globals.get("__name__") != "__main__" or name.startswith("<frozen"):
        return False
    return not (os.path.abspath(name).startswith(_LIBRARY) or _TEST_FILE.search(name))


def _learner_line(exc: BaseException) -> str:
    """``in your code, function F: `<code>` `` for the deepest frame of the learner's cells
    (``_in_learners_cell``); empty when the error did not pass through them."""
    import linecache

    best = None
    for frame, line_number in traceback.walk_tb(exc.__traceback__):
        if _in_learners_cell(frame):
            best = frame, line_number
    if best is None:
        return ""
    frame, line_number = best
    line = linecache.getline(frame.f_code.co_filename, line_number, frame.f_globals).strip()
    if not line:
        return ""
    name = frame.f_code.co_name
    return _say(f"\n  in your code, function {name}: `{line}`",
                f"\n  出错位置：你的代码，函数 {name}：`{line}`")


def _undefined(name: str) -> CheckFailed:
    return CheckFailed(_say(f"`{name}` is not defined. Run the cell that defines it (and every cell above it) "
                            f"before running this check.",
                            f"`{name}` 尚未定义。请先运行定义它的单元（以及它上面的所有单元），再运行这个检查。"))


def call(fn, name: str, *args, error_hints=(), **named):
    """Call the learner's ``fn`` with a time limit and turn any failure into feedback.

    Positional ``args`` are passed as they are; ``named`` arguments are passed positionally in
    the order given, and their names appear in the messages (``attention(q [2, 4, 8], ...)``).
    ``error_hints`` is a list of ``(text, hint)``: when the learner's code raises an error
    whose message contains ``text``, the hint is added to the feedback.
    """
    limit = settings.TIME_LIMIT
    if fn is None:
        raise _undefined(name)
    if not callable(fn):
        raise CheckFailed(_say(f"`{name}` should be a function or a class, got {describe(fn)}.",
                               f"`{name}` 应当是一个函数或类，得到的却是 {describe(fn)}。"))
    shown = ", ".join([describe(a) for a in args] + [f"{k} {describe(v)}" for k, v in named.items()])
    signature = f"{name}({shown})"
    try:
        with time_limit(limit):
            result, executed = _run(fn, [*args, *named.values()])
        _check_bans(executed)
        return result
    except _TimeLimit:
        raise CheckFailed(_say(
            f"{signature} did not finish within {limit:g} s. Is there an infinite loop "
            f"(a `while` whose condition never becomes false)?",
            f"{signature} 在 {limit:g} 秒内没有结束。是否有死循环（条件永远不会变为假的 `while`）？"
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
    limit = settings.TIME_LIMIT
    shown = ", ".join([describe(a) for a in args] + [f"{k} {describe(v)}" for k, v in named.items()])
    signature = f"{name}({shown})"
    why = translate(why)
    if fn is None:
        raise _undefined(name)
    try:
        with time_limit(limit):
            result = fn(*args, *named.values())
    except _TimeLimit:
        raise CheckFailed(_say(f"{signature} did not finish within {limit:g} s.",
                               f"{signature} 在 {limit:g} 秒内没有结束。")) from None
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
    limit = settings.TIME_LIMIT
    import random

    if test_fn is None:
        raise _undefined(name)
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
            with time_limit(limit):
                test_fn(attention)
        except _TimeLimit:
            raise CheckFailed(_say(f"{name} did not finish within {limit:g} s.",
                                   f"{name} 在 {limit:g} 秒内没有结束。")) from None
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
                    "a test must pass on correct code, and this one does not: run it on a correct "
                    "attention (mha.scaled_dot_product_attention) and check that what it asserts is "
                    "true there: the property itself (which axis sums to 1, which entries are 0, "
                    "which shape), and a tolerance for rounding wherever it compares floats.",
                    "测试在正确的代码上必须通过，而这个测试没有通过：请在一个正确的注意力实现"
                    "（mha.scaled_dot_product_attention）上运行它，检查它断言的内容在那里是否成立："
                    "性质本身（哪个轴的和为 1、哪些元素为 0、形状是什么），以及比较浮点数时是否为舍入误差留了容差。")))
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
    if _in_sandbox(fn):
        # Ask the sandbox: there the learner's names all come from the notebook's cells, so any
        # module but __main__ means an import.
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
    for bad, why in reasons.items():
        if bad in bare and not any(u.endswith("." + bad) for u in used) and _own_helper(fn, bad):
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
# not recorded. In the grader the learner's code runs in the sandbox (``grading.sandbox.Remote``):
# the sandbox runs this same ``recording`` around the call and sends back what it recorded
# (``Remote.recorded_call``), so the grader refuses and accepts what the notebook does.

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

    folders = {str(Path(os.path.abspath(__file__)).parents[2]),   # mha (these checks included)
               os.path.dirname(os.path.abspath(torch.__file__))}
    folders |= {os.path.abspath(p) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                if (p := sysconfig.get_paths().get(key))}
    return tuple(folder + os.sep for folder in folders)


_LIBRARY = _library_folders()


def _in_sandbox(fn) -> bool:
    """Whether ``fn`` is the grader's proxy of an object in its sandbox (``grading.sandbox.Remote``,
    whose own class is the grader's and answers ``notebook_module``)."""
    return callable(getattr(type(fn), "notebook_module", None))


def _learners(value) -> bool:
    """Whether ``value`` is a function or class the notebook itself defines."""
    return callable(value) and getattr(value, "__module__", None) == "__main__"


def notebook_defines(fn, name: str) -> bool:
    """Whether ``name``, in the namespace ``fn``'s code reads, is a function or class the notebook
    defines (the learner's own helper), not a library's."""
    return _learners(getattr(fn, "__globals__", {}).get(name))


def _own_helper(fn, name: str) -> bool:
    """``notebook_defines``, asked where ``fn`` lives (the grader asks its sandbox)."""
    if _in_sandbox(fn):
        try:
            return fn.notebook_defines(name) is True
        except Exception:
            return False
    return notebook_defines(fn, name)


def _unrecorded(value):
    """``value`` (a correct version the grader hands to the learner's code), not recorded."""
    if not callable(value) or isinstance(value, type) or _in_sandbox(value):
        return value

    def unrecorded(*args, **kwargs):
        _paused.depth = getattr(_paused, "depth", 0) + 1
        try:
            return value(*args, **kwargs)
        finally:
            _paused.depth -= 1
    unrecorded.__name__ = getattr(value, "__name__", "reference")
    return unrecorded


def _run(fn, args: list):
    """``fn(*args)``, and the library functions it executed when the current test case has bans
    (else None): recorded here, or by the sandbox ``fn`` lives in."""
    if not _bans.get():
        return fn(*args), None
    if _in_sandbox(fn):
        return fn.recorded_call(*args)
    with recording() as executed:
        return fn(*args), executed


# The code object every @contextmanager function shares (contextlib's ``helper``).
_CONTEXT_MANAGER_CODE = contextlib.contextmanager(lambda: iter(())).__code__


@contextlib.contextmanager
def recording(not_learners: tuple[str, ...] = ()):
    """Record the library functions that the learner's code executes in the block: yields the
    set of their names (``cat``, ``torch.cat``, ``mha.attention.scaled_dot_product_attention``,
    its parts ``scaled_dot_product_attention``, ...), filled as the block runs. ``not_learners``:
    files whose code runs as ``__main__`` but is not the learner's (the grader's sandbox process)."""
    executed: set[str] = set()
    learners: dict = {}

    def by_learner(frame) -> bool:
        """Whether ``frame`` runs the learner's own code (a notebook cell: module ``__main__``),
        not a library's (nor code a library generated, such as a dataclass's ``__init__``), a
        test file's or the checks': only what the learner's code calls is recorded (a
        correct version of an earlier answer may use anything)."""
        code = frame.f_code
        if code not in learners:
            name = code.co_filename
            learners[code] = frame.f_globals.get("__name__") == "__main__" and not (
                os.path.abspath(name).startswith(_LIBRARY) or _TEST_FILE.search(name)
                or name.startswith("<frozen") or name in not_learners)
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
                and not by_learner(frame) and frame.f_code.co_filename not in not_learners:
            code = frame.f_code
            qualified = getattr(code, "co_qualname", code.co_name)
            executed.update(qualified.split("."))
            executed.add(f"{frame.f_globals.get('__name__', '')}.{qualified}")
        elif event == "return" and frame.f_code is _CONTEXT_MANAGER_CODE and frame.f_back is not None \
                and by_learner(frame.f_back):
            # ``with ablate_heads(...)``: the body of a @contextmanager runs from contextlib, never
            # called by the learner's code; record the function it decorates, which the returned
            # manager holds (reading it from the frame's locals in a profiler is not safe)
            wrapped = getattr(arg, "func", None)
            qualified = getattr(wrapped, "__qualname__", None)
            if isinstance(qualified, str):
                executed.update(qualified.split("."))
                executed.add(f"{getattr(wrapped, '__module__', '')}.{qualified}")

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



# The notes of the test case that is running (``note``); None outside a test file's run.
_notes: contextvars.ContextVar = contextvars.ContextVar("mha_check_notes", default=None)


def note(text: str) -> None:
    """Add ``text`` (a test file's English, translated like its other texts) to what the check
    shows when the case passes: what the case did not check (a prediction that only the grade
    compares with the answer) or what it measured (the capstone's held-out loss). A check that
    passes with notes says "The checks passed. Note: ...", not "All test cases passed!"."""
    notes = _notes.get()
    if notes is not None:
        notes.append(translate(text))


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
        notes = []
        token = _notes.set(notes)
        try:
            with banning():
                case.body.call_func(env)
            passed, message, error = True, "\n".join(notes), ""
        except Exception as exc:
            passed, message, error = False, failure_message(exc), type(exc).__name__
        finally:
            _notes.reset(token)
        test.test_case_results.append(TestCaseResult(test_case=case, message=message, passed=passed))
        results.append(CaseResult(case.body.test_func.__name__, bool(case.hidden), passed, message,
                                  error))
    return test, results



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

