"""Feedback helpers for the graded exercises of *Multi-Head Attention, Executable*.

The exercises' tests (``tests/q*.py``, run by ``grader.check("q1")``) call these helpers so
that a failing check tells the learner what to fix. They ship inside the course package
(``from mha.course.checks import call, check_tensor``), so the student notebooks, the public
and hidden tests and the grader all use this one copy. Three modules, one job each:

* ``feedback``: comparing the learner's result with the reference (``check_tensor``,
  ``check_tuple``, ``check_equal``, ...) and the messages and hints that say what is wrong;
  ``CheckResult``, what a check cell shows;
* ``language``: the feedback in English or in Chinese (``_say(english, chinese)`` for the checks'
  own texts, ``translate`` through the catalog ``mha.course.messages_zh`` for the test files'
  texts, ``notebook_language``, ``check_output_in`` for the Chinese notebooks' stored outputs);
* ``running``: calling the learner's code (``call``: time limit, errors turned into feedback),
  bans (``forbid``, by source and by the library functions the code executes), correct earlier
  answers (``reference``), running a test file (``run_test_file``) and the check cells'
  ``Notebook``;

and ``inputs``: reproducible inputs (``randn``, ``random_sizes``, ``running_example``).
"""
import os

# Each call of a learner's function gets this many seconds (an infinite loop then fails its
# question instead of hanging the notebook or the grader). Read at each call: set it here.
TIME_LIMIT = float(os.environ.get("MHA_CHECK_TIME_LIMIT", "20"))

from mha.course.checks.feedback import (  # noqa: E402
    CaseResult, CheckFailed, CheckResult, check_equal, check_pair, check_tensor, check_tuple, describe,
    failure_message, shape_str)
from mha.course.checks.inputs import randn, random_sizes, running_example  # noqa: E402
from mha.course.checks.language import (  # noqa: E402
    CATALOG, LANGUAGES, check_output_in, current_language, fixed_texts, is_code, messages_in,
    notebook_language, translate, translate_feedback, untranslated)
from mha.course.checks.running import (  # noqa: E402
    ALIASES, Notebook, banning, call, check_raises, check_test_catches, forbid, note, notebook_defines,
    recording, reference, run_test_file, time_limit)

__all__ = [
    "ALIASES", "CATALOG", "LANGUAGES", "TIME_LIMIT", "CaseResult", "CheckFailed", "CheckResult",
    "Notebook", "banning", "call", "check_equal", "check_output_in", "check_pair", "check_raises",
    "check_tensor", "check_test_catches", "check_tuple", "current_language", "describe",
    "failure_message", "fixed_texts", "forbid", "is_code", "messages_in", "note", "notebook_defines",
    "notebook_language", "randn", "random_sizes", "recording", "reference", "run_test_file", "running_example",
    "shape_str", "time_limit", "translate", "translate_feedback", "untranslated",
]
