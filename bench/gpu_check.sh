#!/usr/bin/env bash
# Issue 33's checks on a GPU machine, in one short slot (about 8 minutes on an H100/H200):
#   1. the device tests (CUDA paths of the course, precision, the causal branch, the
#      compiled decoding step), slow ones included;
#   2. bench/gpu.py at full size, which writes bench/gpu_results.md.
# Run from anywhere, with the repository's venv:   bash bench/gpu_check.sh
# Logs and the results also go to $OUT when it is set (the device machine's return folder).
set -u
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-}
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(),
torch.cuda.get_device_name() if torch.cuda.is_available() else '')"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv 2>/dev/null || true

echo "== 1. device tests"
timeout 200 "$PY" -m pytest -q -p no:cacheprovider --durations=10 \
    tests/test_devices.py tests/test_device.py tests/test_precision.py \
    tests/test_causal_fast_path.py tests/test_compiled_decoding.py 2>&1 | tee /tmp/gpu_tests.log
tests_rc=${PIPESTATUS[0]}

echo "== 2. bench/gpu.py (full sizes)"
timeout 330 "$PY" bench/gpu.py --sizes full 2>&1 | tee /tmp/gpu_bench.log
bench_rc=${PIPESTATUS[0]}

if [ -n "$OUT" ]; then
    cp /tmp/gpu_tests.log /tmp/gpu_bench.log "$OUT"/
    [ -f bench/gpu_results.md ] && cp bench/gpu_results.md "$OUT"/
fi
echo "tests exit $tests_rc, bench exit $bench_rc (124 = ran out of time)"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
