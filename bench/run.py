"""How fast is `mha`? Our attention timed side by side with PyTorch's, in one run.

    .venv/bin/python bench/run.py               # under a minute on 2 idle cores
    .venv/bin/python bench/run.py --threads 1   # the same on one thread
    .venv/bin/python bench/run.py --quick       # fewer repetitions, a rough look
    .venv/bin/python bench/run.py --decoding-only --device cpu   # only the KV-cache timings

Every comparison is measured *interleaved*: each repetition runs every candidate once, in
a rotating order, so a burst of load from another process hits all candidates alike.
Reported times are medians over the repetitions; a ratio is the median of the ratios
taken within each repetition (with its 25th-75th percentile range, a measure of noise).
The thread count is fixed with ``torch.set_num_threads`` and printed with the machine.

Measured:
  1. forward time of ``mha.MultiHeadAttention`` (fast path, ``need_weights=False``) vs
     ``nn.MultiheadAttention(batch_first=True)`` called with ``need_weights=False``, both
     in eval mode under ``torch.no_grad()``, at (B=8, L=128, D=512, h=8) and
     (B=1, L=1024, D=512, h=8); and our explicit, weight-returning path vs our fast path;
  2. achieved GFLOP/s of our forward, counting 8*B*L*D^2 (four projections) +
     4*B*L^2*D (scores and weighted sum) FLOPs, as a fraction of the fp32 matmul GFLOP/s
     this machine reaches in the same run (a 1024 x 1024 x 1024 ``torch.mm``);
  3. decoding without a cache, with the growing ``mha.KVCache`` and with the preallocated
     ``mha.StaticKVCache``, side by side: ``mha.greedy_decode`` on a 2-layer Transformer with
     d_model=256, batch 4, 128 new tokens, and ``mha.generate(temperature=0)`` on a 2-layer
     GPT-2-style ``mha.GPT`` of the same width, batch 4, a 32-token prompt, 128 new tokens
     (``eos_id=None``, so the length is fixed);
  4. one cached decoding step (static cache) under ``torch.profiler``: how many PyTorch ops
     it runs, how much of its time they account for, and which ones cost most (where the
     per-step overhead is);
  5. greedy_decode again with d_model = d_ff = 16: the same ops and Python with almost no
     arithmetic, so its time is the per-step overhead that no cache can remove; from it,
     the share of a cached run that is overhead, and the speed-up of the rest (where the
     rest is large enough to measure: on a GPU both models may take the same time).

``--device`` picks where everything runs (default: ``mha.course.device.pick_device``:
``$MHA_DEVICE``, else cuda, then mps, then cpu); the device is printed with the machine.

Results are printed and written to bench/results.md (a table for people) and
bench/results.csv (for the efficient-attention chapter).
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import mha
from mha.course.device import pick_device
from mha.course.references import torch_twin

HERE = Path(__file__).resolve().parent
D, HEADS = 512, 8
SHAPES = [(8, 128), (1, 1024)]
DECODE = dict(vocab=1000, d_model=256, num_heads=8, num_layers=2, d_ff=1024,
              batch=4, src_len=32, new_tokens=128)  # src_len is the GPT's prompt length too
DEVICE = torch.device("cpu")  # set by main() from --device


def set_device(device) -> torch.device:
    """Run every benchmark on ``device`` (``None``: the course's rule, pick_device)."""
    global DEVICE
    DEVICE = pick_device(device)
    return DEVICE


def sync() -> None:
    """Wait for the GPU: its kernels run asynchronously, so a timer must wait for them."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()
    elif DEVICE.type == "mps":
        torch.mps.synchronize()
TARGETS = {"fast_vs_torch": 1.0, "cache_speedup": 8.0, "matmul_fraction": 0.8}


# ----------------------------------------------------------------------------- timing
def interleaved(candidates: dict, reps: int, target_s: float = 0.02) -> dict[str, list[float]]:
    """Seconds per call of each candidate, one sample per candidate per repetition.

    Each sample times ``inner`` back-to-back calls (``inner`` chosen once so a sample
    lasts about ``target_s``) and divides by ``inner``.
    """
    names = list(candidates)
    inner = {}
    for name in names:  # warm up (allocator, thread pool, caches) and calibrate
        fn = candidates[name]
        fn()
        sync()
        start = time.perf_counter()
        fn()
        sync()
        once = time.perf_counter() - start
        inner[name] = max(1, min(50, round(target_s / max(once, 1e-6))))
    samples = {name: [] for name in names}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(reps):
            k = r % len(names)
            for name in names[k:] + names[:k]:  # rotate who goes first
                fn, n = candidates[name], inner[name]
                start = time.perf_counter()
                for _ in range(n):
                    fn()
                sync()
                samples[name].append((time.perf_counter() - start) / n)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def median(xs):
    return statistics.median(xs)


def paired_ratio(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Median and quartiles of a[r] / b[r] over the repetitions r."""
    ratios = sorted(x / y for x, y in zip(a, b))
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return median(ratios), q[0], q[2]


# ----------------------------------------------------------------------------- machine
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def machine_lines(threads: int) -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    blas = "MKL" if torch.backends.mkl.is_available() else "other BLAS"
    load = load_average()
    return [
        f"CPU: {cpu_model()} ({os.cpu_count()} logical cores, {usable} usable by this process)",
        f"torch {torch.__version__} ({blas}, "
        f"CPU capability {torch.backends.cpu.get_cpu_capability()}), "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}",
        f"device: {DEVICE}; torch.set_num_threads({threads}); float32; eval mode, "
        "torch.no_grad() (greedy_decode and generate: torch.inference_mode(), as they run)",
        f"load average (1/5/15 min) at start: {load}",
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
    ]


@contextlib.contextmanager
def quiet_stderr():
    """The profiler's C++ side prints start/stop lines on stderr: hide them."""
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def kernels_used(fn) -> list[str]:
    """The attention kernels (aten ops) that one call of ``fn`` runs, for the report."""
    from torch.profiler import ProfilerActivity, profile
    with quiet_stderr(), profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    names = {e.key for e in prof.key_averages()}
    keep = ("scaled_dot_product", "multi_head_attention", "flash", "_softmax", "bmm")
    return sorted(n for n in names if any(k in n for k in keep))


# ----------------------------------------------------------------------------- benchmarks
def attention_forward(B: int, L: int, reps: int) -> dict:
    torch.manual_seed(0)
    ours = mha.MultiHeadAttention(D, HEADS).eval()
    # nn.MultiheadAttention(batch_first=True) in eval mode with the same weights, so we can
    # also check the outputs agree
    theirs = torch_twin(ours).to(DEVICE)
    ours = ours.to(DEVICE)
    x = torch.randn(B, L, D, device=DEVICE)
    # what a packed q|k|v projection (nn.MultiheadAttention's in_proj) would save us
    packed_w, packed_b = theirs.in_proj_weight.detach(), theirs.in_proj_bias.detach()
    a = torch.randn(1024, 1024, device=DEVICE)
    b = torch.randn(1024, 1024, device=DEVICE)
    candidates = {
        "ours (fast path)": lambda: ours(x),
        "nn.MultiheadAttention": lambda: theirs(x, x, x, need_weights=False),
        "ours (explicit path)": lambda: ours(x, need_weights=True),
        "torch.mm 1024^3": lambda: torch.mm(a, b),
        "q, k, v: three nn.Linear": lambda: (ours.q_proj(x), ours.k_proj(x), ours.v_proj(x)),
        "q|k|v: one packed F.linear": lambda: F.linear(x, packed_w, packed_b),
    }
    with torch.no_grad():
        fast, _ = ours(x)
        explicit, _ = ours(x, need_weights=True)
        reference, _ = theirs(x, x, x, need_weights=False)
        torch.testing.assert_close(fast, reference, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(explicit, reference, atol=1e-4, rtol=1e-4)
        kernels = {"ours": kernels_used(lambda: ours(x)),
                   "torch": kernels_used(lambda: theirs(x, x, x, need_weights=False))}
        samples = interleaved(candidates, reps)
    flops = 8 * B * L * D**2 + 4 * B * L**2 * D
    fast_s = samples["ours (fast path)"]
    mm_gflops = [2 * 1024**3 / s / 1e9 for s in samples["torch.mm 1024^3"]]
    ours_gflops = [flops / s / 1e9 for s in fast_s]
    return {
        "B": B, "L": L, "samples": samples, "kernels": kernels,
        "fast_vs_torch": paired_ratio(fast_s, samples["nn.MultiheadAttention"]),
        "explicit_vs_fast": paired_ratio(samples["ours (explicit path)"], fast_s),
        "three_vs_packed": paired_ratio(samples["q, k, v: three nn.Linear"],
                                        samples["q|k|v: one packed F.linear"]),
        "packing_saves_ms": 1e3 * (median(samples["q, k, v: three nn.Linear"])
                                   - median(samples["q|k|v: one packed F.linear"])),
        "torch_minus_ours_ms": 1e3 * (median(samples["nn.MultiheadAttention"]) - median(fast_s)),
        "gflops": median(ours_gflops), "matmul_gflops": median(mm_gflops),
        "matmul_fraction": paired_ratio(ours_gflops, mm_gflops),
        "weights_mib": B * HEADS * L * L * 4 / 2**20,
    }


NARROW = 16  # d_model and d_ff of width_floor's model
CACHES = {"no cache": dict(use_cache=False), "growing cache": dict(use_cache=True),
          "static cache": dict(use_cache=True, static_cache=True)}


def decoding_model(width: int | None = None):
    """The benchmark's encoder-decoder and source ids; ``width`` replaces d_model and d_ff."""
    c = DECODE
    d_model, d_ff = (c["d_model"], c["d_ff"]) if width is None else (width, width)
    torch.manual_seed(0)
    model = mha.Transformer(c["vocab"], c["vocab"], d_model, c["num_heads"],
                            c["num_layers"], d_ff).eval().to(DEVICE)
    src = torch.randint(3, c["vocab"], (c["batch"], c["src_len"]), device=DEVICE)
    return model, src


def compare_caches(task: str, run: dict, reps: int) -> dict:
    """Time ``run[kind]()`` for the three kinds of CACHES side by side; check equal tokens."""
    outputs = {kind: fn() for kind, fn in run.items()}
    for kind, out in outputs.items():
        assert torch.equal(out, outputs["no cache"]), f"{task}: {kind} changes the tokens"
    samples = interleaved({f"{task}, {kind}": fn for kind, fn in run.items()}, reps,
                          target_s=0.0)
    s = {kind: samples[f"{task}, {kind}"] for kind in run}
    return {"samples": samples,
            "static_vs_none": paired_ratio(s["no cache"], s["static cache"]),
            "growing_vs_none": paired_ratio(s["no cache"], s["growing cache"]),
            "static_vs_growing": paired_ratio(s["growing cache"], s["static cache"])}


def decoding(reps: int) -> dict:
    """The encoder-decoder's greedy_decode and the GPT's generate, each with no cache, the
    growing cache and the static cache."""
    c = DECODE
    model, src = decoding_model()
    seq2seq = {kind: (lambda kw=kw: mha.greedy_decode(
        model, src, c["new_tokens"] + 1, bos_id=1, eos_id=None, **kw))
        for kind, kw in CACHES.items()}
    torch.manual_seed(0)
    gpt = mha.GPT(mha.GPTConfig.gpt2(c["vocab"], c["src_len"] + c["new_tokens"], c["d_model"],
                                     c["num_heads"], c["num_layers"])).eval().to(DEVICE)
    prompt = torch.randint(3, c["vocab"], (c["batch"], c["src_len"]), device=DEVICE)
    lm = {kind: (lambda kw=kw: mha.generate(gpt, prompt, c["new_tokens"], temperature=0, **kw))
          for kind, kw in CACHES.items()}
    return {"greedy_decode": compare_caches("greedy_decode", seq2seq, reps),
            "GPT generate": compare_caches("GPT generate", lm, reps)}


def width_floor(reps: int) -> dict:
    """greedy_decode of the same model made NARROW wide (d_model = d_ff = NARROW): the same
    layers, ops and Python, almost no arithmetic. Its times are the per-step cost that does
    not depend on the width: dispatch, Python and the module calls."""
    c = DECODE
    model, src = decoding_model(width=NARROW)
    run = {kind: (lambda kw=kw: mha.greedy_decode(
        model, src, c["new_tokens"] + 1, bos_id=1, eos_id=None, **kw))
        for kind, kw in CACHES.items() if kind != "growing cache"}
    samples = interleaved(run, reps, target_s=0.0)
    return {kind: median(s) for kind, s in samples.items()}


# A difference of medians counts as work only if it is at least this share of the full
# model's time: medians of a few repetitions move by several percent from run to run, so a
# smaller difference may be noise, and a ratio of two noises means nothing.
MIN_WIDTH_SHARE = 0.1


def width_speedup(none: float, static: float, narrow_none: float,
                  narrow_static: float) -> float | None:
    """How much the static cache speeds up the width-dependent work alone: the full model's
    time minus the narrow model's, without a cache over with the static cache.

    None when either difference is not clearly positive (under MIN_WIDTH_SHARE of the full
    model's time): the narrow model runs about as long as the full one, as on a GPU, and the
    width-dependent work cannot be told apart from the per-step overhead.

    >>> width_speedup(4.0, 1.0, 1.5, 0.5)   # (4.0 - 1.5) / (1.0 - 0.5)
    5.0
    >>> width_speedup(0.50, 0.20, 0.76, 0.21) is None   # the narrow model is slower
    True
    """
    without_cache, with_cache = none - narrow_none, static - narrow_static
    if without_cache < MIN_WIDTH_SHARE * none or with_cache < MIN_WIDTH_SHARE * static:
        return None
    return without_cache / with_cache


def floor_figures(full: dict, narrow: dict) -> dict:
    """Split greedy_decode's times into the part that does not depend on the width (the
    narrow model's) and the rest: how much of a cached run is overhead, and how much the
    width-dependent work alone speeds up with the static cache (None: too small to tell)."""
    none = median(full["samples"]["greedy_decode, no cache"])
    static = median(full["samples"]["greedy_decode, static cache"])
    return {"narrow": narrow,
            "overhead_share": narrow["static cache"] / static,
            "arithmetic_speedup": width_speedup(none, static, narrow["no cache"],
                                                narrow["static cache"])}


def cached_step_profile(steps: int = 16) -> dict:
    """One cached decoding step of the ``decoding`` model, op by op (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    c = DECODE
    model, src = decoding_model()
    tokens = torch.randint(3, c["vocab"], (c["batch"], 64 + 2 * steps), device=DEVICE)
    with torch.inference_mode():  # as in greedy_decode
        memory = model.encode(src)
        caches = model.new_caches(max_len=64 + 2 * steps)
        model.decode(tokens[:, :64], memory, caches=caches)  # a 64-token prefix in the cache
        wall = []
        for t in range(64, 64 + steps):  # timed without the profiler's own overhead
            start = time.perf_counter()
            model.decode(tokens[:, t:t + 1], memory, caches=caches)
            sync()
            wall.append(time.perf_counter() - start)
        with quiet_stderr(), profile(activities=[ProfilerActivity.CPU]) as prof:
            for t in range(64 + steps, 64 + 2 * steps):
                model.decode(tokens[:, t:t + 1], memory, caches=caches)
    # top-level aten ops only (an op called by another op is counted in its parent)
    events = [e for e in prof.events() if e.name.startswith("aten::") and
              (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))]
    per_op: dict[str, list[float]] = {}
    for e in events:
        per_op.setdefault(e.name, []).append(e.cpu_time_total)  # microseconds, with children
    top = sorted(per_op.items(), key=lambda kv: -sum(kv[1]))[:8]
    return {
        "wall_us": median(wall) * 1e6,
        "ops_per_step": len(events) / steps,
        "op_us_per_step": sum(e.cpu_time_total for e in events) / steps,
        "top": [(name, len(ts) / steps, sum(ts) / steps) for name, ts in top],
    }


# ----------------------------------------------------------------------------- report
def decoding_table(dec: dict) -> list[str]:
    """The three caches side by side, one line per task: median times and ratios."""
    lines = [f"{'task':14} {'no cache':>10} {'growing':>10} {'static':>10}   "
             f"{'none/static':>18} {'none/growing':>18} {'growing/static':>18}"]
    for task, d in dec.items():
        ms = {kind: median(d["samples"][f"{task}, {kind}"]) * 1e3 for kind in CACHES}
        lines.append(f"{task:14} {ms['no cache']:8.0f}ms {ms['growing cache']:8.0f}ms "
                     f"{ms['static cache']:8.0f}ms   {fmt_ratio(d['static_vs_none']):>18} "
                     f"{fmt_ratio(d['growing_vs_none']):>18} "
                     f"{fmt_ratio(d['static_vs_growing']):>18}")
    return lines


def fmt_ratio(r: tuple[float, float, float], unit: str = "x") -> str:
    return f"{r[0]:.2f}{unit} [{r[1]:.2f}-{r[2]:.2f}]"


def verdict(value: float, target: float, at_most: bool) -> str:
    ok = value <= target if at_most else value >= target
    return "met" if ok else "MISSED"


TOO_SMALL = "too small to separate from per-step overhead on this device"


def floor_note(floor: dict) -> str:
    """The note on floor_figures: what share of a cached run is per-step overhead, and how
    much the static cache speeds up the rest (or that the rest is too small to measure)."""
    share, alone = floor["overhead_share"], floor["arithmetic_speedup"]
    line = (f"- The same model at d_model = d_ff = {NARROW} runs the same ops with almost no "
            f"arithmetic: its cached run takes {100 * share:.0f}% of the full model's time.")
    if alone is None:
        return line + (f" The width-dependent work is {TOO_SMALL}: the narrow model runs about "
                       "as long as the full one, so every step costs about the same whatever "
                       "the width, and subtracting one time from the other leaves noise.")
    line += (f" Without that part, the width-dependent work alone speeds up {alone:.1f}x "
             f"with the static cache.")
    if alone >= TARGETS["cache_speedup"]:
        line += (" The cache does its part; the per-step overhead, which runs with or "
                 "without a cache, is what holds the whole run below "
                 f"{TARGETS['cache_speedup']:.0f}x. Removing it takes fewer, fused ops per "
                 "step or a compiled step, not a faster cache.")
    else:
        line += (" That is below the target too, so in this run the overhead alone does not "
                 "explain the shortfall (a loaded machine makes these times unreliable).")
    return line


def notes(forwards, dec, step, floor, loads: tuple[float, float]) -> list[str]:
    """Say which targets were missed, by how much, and what the measurements point to.

    ``loads``: the 1-minute load average at the start and at the end of the run.
    """
    out = []
    cores = os.cpu_count() or 1
    if max(loads) > 0.5 * cores:
        out.append(f"- The machine was loaded (1-minute load average {loads[0]:.1f} at the start, "
                   f"{loads[1]:.1f} at the end, on {cores} cores): other processes competed for "
                   "the cores, so absolute times are inflated and ratios noisier; interleaving "
                   "spreads the load over all candidates alike.")
    for f in forwards:
        r = f["fast_vs_torch"][0]
        if r > TARGETS["fast_vs_torch"]:
            out.append(
                f"- B={f['B']}, L={f['L']}: ours is {100 * (r - 1):.0f}% slower than "
                f"nn.MultiheadAttention ({f['torch_minus_ours_ms']:+.2f} ms per call, torch minus "
                f"ours). Projecting q, k and v with three Linears instead of one packed one costs "
                f"{f['packing_saves_ms']:.2f} ms here ({fmt_ratio(f['three_vs_packed'])}): "
                "the packed buffer that would buy this back is what issue 10 removed for "
                "readability.")
    r = dec["greedy_decode"]["static_vs_none"][0]
    if r < TARGETS["cache_speedup"]:
        per_op = step["wall_us"] / step["ops_per_step"]
        out.append(
            f"- greedy_decode with the static KV cache: {r:.1f}x instead of "
            f"{TARGETS['cache_speedup']:.0f}x "
            f"({100 * (1 - r / TARGETS['cache_speedup']):.0f}% short). A cached step does almost "
            f"no arithmetic (its matmuls have {DECODE['batch']} rows) but still runs "
            f"{step['ops_per_step']:.0f} PyTorch ops, about {per_op:.0f} us each: the step is "
            "bound by per-op dispatch and Python, which grows with the number of layers and "
            "sublayers, not with the sequence. The uncached run's extra work grows with the "
            "prefix, so the speed-up grows with the number of new tokens.")
        out.append(floor_note(floor))
    f = forwards[0]
    r = f["matmul_fraction"][0]
    if r < TARGETS["matmul_fraction"]:
        out.append(
            f"- B={f['B']}, L={f['L']}: {f['gflops']:.0f} of {f['matmul_gflops']:.0f} GFLOP/s "
            f"({r:.2f}, {100 * (1 - r / TARGETS['matmul_fraction']):.0f}% below the 0.8 target). "
            "The reference is one large square matmul; our forward's matmuls are smaller "
            f"([{f['B'] * f['L']}, {D}] x [{D}, {D}]) and the attention kernel, head split and "
            "merge add memory traffic that does no counted FLOPs.")
    if not out:
        out.append("- Every target was met in this run.")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    parser.add_argument("--reps", type=int, default=30, help="repetitions of the forward timings")
    parser.add_argument("--decode-reps", type=int, default=7,
                        help="repetitions of the decoding timings")
    parser.add_argument("--quick", action="store_true", help="5 and 3 repetitions: a rough look")
    parser.add_argument("--out", type=Path, default=HERE, help="folder for results.md/.csv")
    parser.add_argument("--device", default=None,
                        help="cpu, cuda, mps (default: $MHA_DEVICE, else cuda, mps, cpu)")
    parser.add_argument("--decoding-only", action="store_true",
                        help="only the three caches, printed; results files left alone")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.decode_reps = 5, 3
    set_device(args.device)
    torch.set_num_threads(args.threads)
    if args.decoding_only:
        print("\n".join(machine_lines(args.threads)), flush=True)
        print("\n".join(decoding_table(decoding(args.decode_reps))))
        print(f"load average at end: {load_average()}")
        return 0
    header = machine_lines(args.threads)
    load_start = os.getloadavg()[0]
    print("\n".join(header), flush=True)

    forwards = []
    print(f"device: {DEVICE}", flush=True)
    for B, L in SHAPES:
        print(f"timing the forward at B={B}, L={L}, D={D}, h={HEADS} ...", flush=True)
        forwards.append(attention_forward(B, L, args.reps))
    print("timing decoding with no cache, the growing cache and the static cache ...", flush=True)
    dec = decoding(args.decode_reps)
    print("\n".join(decoding_table(dec)), flush=True)
    print(f"timing greedy_decode again at d_model = d_ff = {NARROW} (the per-step overhead) ...",
          flush=True)
    floor = floor_figures(dec["greedy_decode"], width_floor(args.decode_reps))
    print("profiling one cached decoding step ...", flush=True)
    step = cached_step_profile()
    header.append(f"load average at end: {load_average()}")

    rows = []  # (measure, value, unit, target, verdict, detail)
    for f in forwards:
        shape = f"B={f['B']}, L={f['L']}"
        r = f["fast_vs_torch"]
        rows.append((f"ours (fast) / nn.MultiheadAttention time, {shape}", r[0], "x",
                     "<= 1.0", verdict(r[0], TARGETS["fast_vs_torch"], True), fmt_ratio(r)))
    for f in forwards:
        r = f["explicit_vs_fast"]
        rows.append((f"ours explicit / ours fast time, B={f['B']}, L={f['L']}", r[0], "x",
                     "", "", fmt_ratio(r) + f"; weights [B,H,L,L] = {f['weights_mib']:.1f} MiB"))
    for task, d in dec.items():
        for key, what, target in (("static_vs_none", "static cache vs no cache", ">= 8"),
                                  ("growing_vs_none", "growing cache vs no cache", ""),
                                  ("static_vs_growing", "static vs growing cache", "")):
            r = d[key]
            rows.append((f"{task} speed-up, {what}, {DECODE['new_tokens']} tokens", r[0], "x",
                         target, verdict(r[0], TARGETS["cache_speedup"], False) if target else "",
                         fmt_ratio(r)))
    rows.append((f"greedy_decode with the static cache: time at d_model={NARROW} / at "
                 f"d_model={DECODE['d_model']}", floor["overhead_share"], "", "", "",
                 f"{floor['overhead_share']:.2f}: this share of a cached run does not depend "
                 "on the width"))
    alone = floor["arithmetic_speedup"]
    rows.append(("greedy_decode speed-up of the width-dependent work alone, static cache vs "
                 "no cache", alone, "x", "", "", TOO_SMALL if alone is None else f"{alone:.1f}x"))
    for f in forwards:
        r = f["three_vs_packed"]
        rows.append((f"q,k,v as three Linears / one packed Linear, B={f['B']}, L={f['L']}", r[0],
                     "x", "", "", fmt_ratio(r) + f"; packing would save {f['packing_saves_ms']:.2f} ms"))
    for f in forwards:
        r = f["matmul_fraction"]
        target = ">= 0.8" if (f["B"], f["L"]) == SHAPES[0] else ""
        rows.append((f"our forward GFLOP/s / torch.mm GFLOP/s, B={f['B']}, L={f['L']}", r[0], "",
                     target, verdict(r[0], TARGETS["matmul_fraction"], False) if target else "",
                     f"{f['gflops']:.0f} of {f['matmul_gflops']:.0f} GFLOP/s; " + fmt_ratio(r, "")))

    times = []  # (what, median ms)
    for f in forwards:
        for name, s in f["samples"].items():
            times.append((f"{name}, B={f['B']}, L={f['L']}", median(s) * 1e3))
    for d in dec.values():
        for name, s in d["samples"].items():
            times.append((name, median(s) * 1e3))
    for kind, seconds in floor["narrow"].items():
        times.append((f"greedy_decode at d_model={NARROW}, {kind}", seconds * 1e3))

    kern = [f"B={f['B']}, L={f['L']}: ours -> {', '.join(f['kernels']['ours'])}; "
            f"nn.MultiheadAttention -> {', '.join(f['kernels']['torch'])}" for f in forwards]
    md = ["# Benchmark: `mha` against PyTorch", "",
          "Produced by `.venv/bin/python bench/run.py`. Machine:", ""]
    md += [f"- {line}" for line in header]
    md += ["", f"Repetitions: {args.reps} (forward), {args.decode_reps} (decoding), interleaved; "
           "ratios are medians of per-repetition ratios, [25th-75th percentile].", "",
           "| measure | result | target | |", "|---|---|---|---|"]
    md += [f"| {m} | {detail} | {t} | {v} |" for m, _, _, t, v, detail in rows]
    md += ["", "| median time per call | ms |", "|---|---|"]
    md += [f"| {name} | {ms:.2f} |" for name, ms in times]
    md += ["", "Attention kernels seen in one call (torch.profiler):", ""]
    md += [f"- {k}" for k in kern]
    decode_desc = ", ".join(f"{k}={v}" for k, v in DECODE.items())
    md += ["", f"Decoding models: {decode_desc}; the GPT is GPT-2-style with the same width, "
           "depth and heads, its prompt src_len tokens long; eos_id=None.", ""]
    md += ["One cached decoding step of greedy_decode (static cache, 64 tokens already cached; "
           "torch.profiler, top-level ops): "
           f"{step['wall_us']:.0f} us wall time without the profiler, "
           f"{step['ops_per_step']:.0f} PyTorch ops accounting for {step['op_us_per_step']:.0f} us "
           "(with the profiler's own overhead). Costliest ops per step:", "",
           "| op | calls per step | us per step |", "|---|---|---|"]
    md += [f"| {name} | {calls:.0f} | {us:.0f} |" for name, calls, us in step["top"]]
    md += ["", "## Notes (written by the script from the figures above)", ""]
    md += notes(forwards, dec, step, floor, (load_start, os.getloadavg()[0]))
    md += [""]
    text = "\n".join(md)
    print()
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(text)
    with open(args.out / "results.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["measure", "value", "unit", "target", "verdict", "detail"])
        for m, value, unit, t, v, detail in rows:
            # no value where there is no figure (the width-dependent speed-up on a GPU)
            w.writerow([m, "" if value is None else f"{value:.4f}", unit, t, v, detail])
        for name, ms in times:
            w.writerow([f"median time: {name}", f"{ms:.4f}", "ms", "", "", ""])
        w.writerow(["median time: one cached decoding step", f"{step['wall_us'] / 1e3:.4f}", "ms",
                    "", "", f"{step['ops_per_step']:.0f} ops"])
        for line in header:
            w.writerow(["machine", "", "", "", "", line])
    print(f"wrote {args.out / 'results.md'} and {args.out / 'results.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
