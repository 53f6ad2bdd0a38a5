"""bench/run.py's split of greedy_decode's time into per-step overhead and width-dependent work.

The speed-up of the width-dependent work alone is (full - narrow, no cache) /
(full - narrow, static cache). Where the narrow model (d_model = d_ff = 16) runs about as
long as the full one, as on a GPU, both differences are noise and their ratio means nothing:
issue 33 saw "speeds up -259548589.0x". The bench must say so in words instead.
"""
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run.py"
spec = importlib.util.spec_from_file_location("bench_run", BENCH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def full_run(none: float, static: float) -> dict:
    """compare_caches' result for greedy_decode, reduced to what floor_figures reads."""
    return {"samples": {"greedy_decode, no cache": [none],
                        "greedy_decode, static cache": [static]}}


def test_the_speed_up_of_the_width_dependent_work_is_the_ratio_of_the_differences():
    # the CPU figures of bench/results.md, rounded: 4.0 s and 1.0 s full, 1.5 s and 0.5 s narrow
    assert bench.width_speedup(4.0, 1.0, 1.5, 0.5) == pytest.approx(5.0)


@pytest.mark.parametrize("none, static, narrow_none, narrow_static", [
    (0.50, 0.20, 0.76, 0.21),   # issue 33 on CUDA: the narrow model is slower than the full one
    (0.50, 0.20, 0.30, 0.20),   # no difference at all with the static cache: was a division by 0
    (0.50, 0.20, 0.30, 0.199),  # a difference of 0.5% of the run: noise, not work
    (0.50, 0.20, 0.49, 0.10),   # the same, without a cache
])
def test_no_speed_up_when_the_narrow_model_is_not_clearly_faster(none, static, narrow_none,
                                                                  narrow_static):
    assert bench.width_speedup(none, static, narrow_none, narrow_static) is None


def test_the_report_says_in_words_when_the_width_dependent_work_cannot_be_separated():
    floor = bench.floor_figures(full_run(0.50, 0.20),
                                {"no cache": 0.76, "static cache": 0.21})
    assert floor["arithmetic_speedup"] is None
    line = bench.floor_note(floor)
    assert "too small to separate from per-step overhead on this device" in line
    assert "speeds up" not in line


def test_the_report_gives_the_ratio_when_there_is_one():
    floor = bench.floor_figures(full_run(4.0, 1.0), {"no cache": 1.5, "static cache": 0.5})
    assert floor["arithmetic_speedup"] == pytest.approx(5.0)
    assert floor["overhead_share"] == pytest.approx(0.5)
    assert "the width-dependent work alone speeds up 5.0x" in bench.floor_note(floor)
