"""Does beam search change the numerals model's answers? Over seeds and CPU kernel sets.

    .venv/bin/python bench/beam_spread.py            # both kernel sets, 5 seeds: ~10 min on 2 cores
    .venv/bin/python bench/beam_spread.py --seeds 0 1

Not a speed benchmark: the measurement behind chapter 12's statement about beam search. For
each seed, chapter 7's model is trained for 400 steps (as chapter 12 does) and the 1000
held-out numbers are decoded greedily and by beam search of width 2-8 with length_penalty 0
and 1; the script counts the greedy errors each beam fixes and the right answers it breaks.
It runs once under the CPU kernels PyTorch picks on this machine and once under the next set
down (conftest.py's second_kernel_set: what `make notebooks` checks under on a machine like the
one that recorded the outputs),
because a training run rounds differently under each and ends at a slightly different model.
Results are printed and written to bench/beam_spread.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WIDTHS = range(2, 9)
ALPHAS = (0.0, 1.0)


def measure(seeds: list[int]) -> dict:
    """{seed: {"greedy": exact match, "alpha/width": [fixed, broken]}} under this process's kernels."""
    import torch

    from mha import beam_search, greedy_decode
    from mha.course.numerals import BOS_ID, EOS_ID, decode_target, make_batch, split_numbers
    from mha.course.training import exact_match, train_numeral_model

    torch.set_num_threads(1)
    _, test_numbers = split_numbers(n_test=1000)
    batch = make_batch(test_numbers)
    results = {}
    for seed in seeds:
        model, _ = train_numeral_model(steps=400, seed=seed, cache=False)
        greedy = [decode_target(r) for r in greedy_decode(model, batch.src, 8, BOS_ID, EOS_ID,
                                                          src_mask=batch.src_mask).tolist()]
        row = {"greedy": exact_match(greedy, batch.targets)}
        for alpha in ALPHAS:
            for width in WIDTHS:
                tokens, _ = beam_search(model, batch.src, beam_size=width, max_len=8, bos_id=BOS_ID,
                                        eos_id=EOS_ID, src_mask=batch.src_mask, length_penalty=alpha)
                beam = [decode_target(r) for r in tokens.tolist()]
                pairs = list(zip(greedy, beam, batch.targets))
                row[f"{alpha}/{width}"] = [sum(g != t and b == t for g, b, t in pairs),
                                           sum(g == t and b != t for g, b, t in pairs)]
        results[seed] = row
        print(f"{torch.backends.cpu.get_cpu_capability()} seed {seed}: {row}", flush=True)
    return {"kernels": torch.backends.cpu.get_cpu_capability(), "results": results}


def table(run: dict) -> list[str]:
    lines = [f"### PyTorch CPU kernels: {run['kernels']}", "",
             "| seed | greedy exact match | most greedy errors fixed (any width, penalty) "
             "| most right answers broken |", "|---|---|---|---|"]
    for seed, row in run["results"].items():
        changes = [v for k, v in row.items() if k != "greedy"]
        lines.append(f"| {seed} | {100 * row['greedy']:.1f}% | {max(f for f, _ in changes)} "
                     f"| {max(b for _, b in changes)} |")
    return lines + [""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--this-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.this_process:
        print("RESULT " + json.dumps(measure(args.seeds)))
        return 0
    from conftest import native_capability, second_kernel_set

    runs = []
    for extra in ({}, second_kernel_set(native_capability())):
        done = subprocess.run([sys.executable, __file__, "--this-process", "--seeds", *map(str, args.seeds)],
                              env={**os.environ, **extra}, capture_output=True, text=True, check=True)
        print(done.stdout, end="")
        runs.append(json.loads(done.stdout.split("RESULT ", 1)[1]))
    lines = ["# Beam search on the numerals model, over seeds and CPU kernel sets", "",
             "Written by `bench/beam_spread.py`: 1000 held-out numbers, 400 training steps, beam widths "
             f"{WIDTHS.start}-{WIDTHS.stop - 1}, length_penalty 0 and 1.", ""]
    for run in runs:
        lines += table(run)
    (HERE / "beam_spread.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
