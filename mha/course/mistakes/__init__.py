"""The catalogue of classic mistakes: one data file per exercise, ``exNN.py``, that a teacher edits.

Each file holds ``MISTAKES = {question: {mistake id: {"seen": ..., "en": ..., "zh": ...}}}``:

* ``seen``: how the checks recognise the mistake, by behaviour: what the learner's code returns
  equals what the reference returns with this mistake applied (e.g. "the weights equal the
  reference's with the softmax over the queries");
* ``en`` and ``zh``: the hint the learner reads, in English and in Chinese. A hint names the
  mistake and the idea to check, never the expression that fixes it
  (``tests/test_hints_teach.py`` compares its code with the solutions').

The test files ask for the hints by id, handing over the value each mistake produces:
``hints("ex01_self_attention", "q1", no_scale=q @ k.T)`` is
``[(q @ k.T, "the scores are not scaled: ...")]``, the ``(candidate, message)`` pairs that
``mha.course.checks.check_tensor`` shows when the learner's result equals the candidate.
For the three classics of attention (no 1/sqrt(d_k) scale, the softmax over the wrong axis, an
inverted mask) ``classic_attention`` computes those values. The messages are English; the
checks translate them with ``messages_zh()`` (this catalogue's Chinese) like any other text.
``tests/test_mistakes_catalogue.py`` plants every catalogued mistake into the solution
(``grading/known_bugs.py``, feedback ``"mistake:<id>"``) and requires its hint in both languages.
An exercise without a data file simply has no catalogued mistakes. A new mistake needs three
things: its entry here, a planted bug in grading/known_bugs.py (feedback ``"mistake:<id>"``)
and its value handed over by the question's test file.
"""
from __future__ import annotations

import importlib
import math
import pkgutil
import re

LANGUAGES = ("en", "zh")
FIELDS = {"seen", "en", "zh"}


def _module_name(exercise: str) -> str:
    match = re.match(r"(ex\d\d)", exercise)
    if not match:
        raise ValueError(f"not an exercise name: {exercise!r} (expected e.g. 'ex01_self_attention')")
    return match.group(1)


def catalogue(exercise: str) -> dict[str, dict[str, dict[str, str]]]:
    """``{question: {mistake id: {"seen", "en", "zh"}}}`` of ``exercise`` ('ex01' or
    'ex01_self_attention'); ``{}`` when the exercise has no data file."""
    name = _module_name(exercise)
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        return {}
    return module.MISTAKES


def exercises() -> list[str]:
    """The exercises that have a data file: ['ex01', ...]."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if re.fullmatch(r"ex\d\d", m.name))


def mistake(exercise: str, question: str, name: str) -> dict[str, str]:
    """One catalogued mistake; KeyError naming the data file when it is not there."""
    found = catalogue(exercise).get(question, {}).get(name)
    if found is None:
        raise KeyError(f"no mistake {name!r} for {question} in mha/course/mistakes/"
                       f"{_module_name(exercise)}.py")
    return found


def hints(exercise: str, question: str, **candidates) -> list[tuple[object, str]]:
    """``(candidate, English hint)`` pairs for the checks: ``name=value`` gives mistake
    ``name``'s hint, shown when the learner's result equals ``value`` (a tensor, a plain value,
    a predicate ``value(got) -> bool``, or for ``call``'s ``error_hints`` a text of the error)."""
    return [(_close_to(value), mistake(exercise, question, name)["en"]) for name, value in candidates.items()]


def _close_to(value):
    """A tensor candidate as a predicate: ``got`` has its shape and values, a nan and a 0
    counting as the same (a fully blocked row is nan before a learner's fix and 0 after it)."""
    import torch

    if not isinstance(value, torch.Tensor) or value.dtype == torch.bool:
        return value

    def close(got):
        if not isinstance(got, torch.Tensor) or got.shape != value.shape or got.dtype == torch.bool:
            return False
        atol, rtol = (2e-2, 1e-2) if torch.float16 in (got.dtype, value.dtype) else (1e-5, 1e-4)
        return bool(torch.allclose(got.detach().double().nan_to_num(0.0), value.detach().double().nan_to_num(0.0),
                                   atol=atol, rtol=rtol))
    return close


def messages_zh() -> dict[str, str]:
    """English hint -> Chinese hint, over every data file (the checks' translation catalog)."""
    found = {}
    for name in exercises():
        for mistakes in catalogue(name).values():
            for entry in mistakes.values():
                found[entry["en"]] = entry["zh"]
    return found


def classic_attention(q, k, v, mask=None, scale: float | None = None) -> dict[str, tuple]:
    """The reference attention and the classic mistakes applied to it, by mistake id.

    ``q`` [..., L, d_k], ``k`` [..., S, d_k], ``v`` [..., S, d_v]; ``mask`` (optional) bool,
    broadcastable to [..., L, S], True = may attend. Returns ``{id: (out, weights)}`` for
    ``reference``, ``no_scale`` (no 1/sqrt(d_k)), ``floor_scale`` (``//`` instead of ``/``),
    ``softmax_axis`` (softmax over the queries) and, with a mask, ``inverted_mask`` (blocking
    where the mask allows) and ``no_mask`` (the mask ignored). A fully blocked row (or column,
    for the softmax over the queries) is nan, as the softmax gives it; ``hints`` counts a nan
    and a 0 as the same, so a learner who turned those nan into 0 is recognised too."""
    import torch

    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    raw = q.double() @ k.double().transpose(-2, -1)

    def attend(scores, keep, dim=-1):
        if keep is not None:
            scores = scores.masked_fill(~keep, float("-inf"))
        weights = torch.softmax(scores, dim=dim)  # nan where every score is -inf: see hints
        return (weights @ v.double()).to(v.dtype), weights.to(q.dtype)

    found = {
        "reference": attend(raw * scale, mask),
        "no_scale": attend(raw, mask),
        "floor_scale": attend(raw // (1 / scale), mask),
        "softmax_axis": attend(raw * scale, mask, dim=-2),
    }
    if mask is not None:
        found["inverted_mask"] = attend(raw * scale, ~mask)
        found["no_mask"] = attend(raw * scale, None)
    return found
