"""Shared fixtures and settings for the test suite."""
import os

import pytest
import torch
from hypothesis import HealthCheck, Phase, settings

# Property tests draw the same examples on every run (CI must not be flaky) but still
# cover many shapes; `HYPOTHESIS_PROFILE=explore` draws fresh ones locally.
settings.register_profile(
    "ci", max_examples=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", max_examples=300, deadline=None)
# For checking that a deliberately broken build goes red quickly: no shrinking.
settings.register_profile("quick", max_examples=15, derandomize=True, deadline=None,
                          phases=[Phase.explicit, Phase.generate])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

torch.set_num_threads(1)  # xdist already runs one worker per core


# The integration step's longest files, longest first (seconds of their slowest items in
# `make integration` on 2 idle cores, 2026-11-27): with `--dist loadfile` each file runs whole on
# one worker, so they must start first, or the last one to start is the step's tail. (xdist's
# default order, most tests first, starts them last: a file of two tests that grade every
# exercise looks small to it.)
LONGEST_FILES = (
    "test_checks_language.py",      # 285: every exercise's variants, in English and in Chinese
    "test_exercises_grading.py",    # 246: every exercise through the instructor command
    "test_grading_adversarial.py",  # 181: the hostile class
    "test_grading_lifecycle.py",    # 93: stopping the command three ways, a symlinked venv
    "test_grading_export.py",       # 69
    "test_grading_bans.py",         # 57
)


def pytest_configure(config):
    # `make unit` leaves these out; `make integration` (part of `make test`) runs them
    config.addinivalue_line(
        "markers", "slow: integration test (subprocess, fresh venv, grading whole notebooks)")
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False  # keep the order below (--no-loadscope-reorder)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    # xdist, in the controller: its workers see `--dist no`, so tell them which it is
    node.workerinput["longest_first"] = getattr(node.config.option, "dist", "no") == "loadfile"


def pytest_collection_modifyitems(config, items):
    # the workers collect; the controller schedules the files in the order they collected them
    if not getattr(config, "workerinput", {}).get("longest_first"):
        return
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
