"""bench/gpu.py runs end to end at its small sizes on the CPU and names the device."""
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "gpu.py"
spec = importlib.util.spec_from_file_location("bench_gpu", BENCH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


@pytest.mark.slow  # imports transformers and times three sections: tens of seconds
def test_small_sizes_run_on_the_cpu_and_write_every_table(tmp_path):
    out = tmp_path / "gpu_results.md"
    assert bench.main(["--sizes", "small", "--device", "cpu", "--no-compile",
                       "--out", str(out)]) == 0
    text = out.read_text()
    assert "Device: **" in text and "(cpu)" in text
    for heading in ("1. Causal multi-head attention", "2. Training step", "3. Greedy generation"):
        assert heading in text
    assert "| B=1 | same tokens as transformers | True |" in text
    assert text.count("not run (--no-compile)") == 3  # one training row, two decoding rows


def test_the_peak_of_a_known_gpu_and_unknown_otherwise():
    assert bench.PEAK_TFLOPS["H100"] == 989.0
    name, peak = bench.peak_tflops(bench.torch.device("cpu"))
    assert peak is None and name
