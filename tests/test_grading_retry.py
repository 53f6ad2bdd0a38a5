"""A question whose tests fail in the grader's own machinery is tried once more (grading/worker.py)."""
import pytest

from grading import worker


def _flaky(monkeypatch, failures: int):
    calls = []

    def run_cases(test, path, env, language, hidden):
        calls.append(hidden)
        if len(calls) <= failures:
            raise SystemError("error return without exception set")
        return [f"case {len(calls)}"]

    monkeypatch.setattr(worker, "load_test_file", lambda path: object())
    monkeypatch.setattr(worker, "run_cases", run_cases)
    return calls


def test_one_failure_of_the_graders_machinery_is_tried_again(monkeypatch):
    calls = _flaky(monkeypatch, failures=1)
    started = {}
    assert worker._run_question(started, "q4", "tests/q4.py", {}, "en", False) == ["case 2"]
    assert calls == [False, False] and started["q4"][1] == ["case 2"]


def test_two_failures_give_up_with_the_error(monkeypatch):
    _flaky(monkeypatch, failures=2)
    with pytest.raises(SystemError):
        worker._run_question({}, "q4", "tests/q4.py", {}, "en", True)
