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


def pytest_configure(config):
    # `make unit` leaves these out; `make integration` (part of `make test`) runs them
    config.addinivalue_line(
        "markers", "slow: integration test (subprocess, fresh venv, grading whole notebooks)")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
