"""Is our GPT as fast as transformers'? The same weights and config, timed side by side.

    .venv/bin/python bench/lm.py                # a few minutes on 2 idle cores
    .venv/bin/python bench/lm.py --quick        # fewer repetitions, a rough look
    .venv/bin/python bench/lm.py --threads 1
    .venv/bin/python bench/lm.py --device cuda  # default: $MHA_DEVICE, else cuda, mps, cpu

Two models, each converted from a transformers model with random weights (so both hold
identical weights, checked by comparing logits before timing), float32, on the device
chosen by ``--device`` (``mha.course.device.pick_device``; printed in the header):

* GPT-2 style: ``GPT2LMHeadModel`` with d_model 256, 4 layers, 8 heads, vocab 4096;
* Llama style: ``LlamaForCausalLM`` with d_model 256, 4 layers, 8 heads, 2 KV heads,
  SwiGLU width 704, vocab 4096.

For each: a training step (forward, backward, AdamW step) at batch 16 x 128 tokens, and
greedy generation of 128 new tokens from a 32-token prompt at batch 1 and 8 (our
``mha.generate(temperature=0)`` vs transformers' ``generate(do_sample=False)``, both with
their KV cache, no early stop); ours once more with the preallocated
``mha.StaticKVCache`` (``static_cache=True``) against the same transformers run. Timing
is interleaved (bench/run.py's ``interleaved``: every repetition runs both, in rotating
order); the ratio ours / transformers is the
median of the per-repetition ratios, with its quartiles. Target: ratio <= 1.0.

Results are printed and written to bench/lm_results.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (bench/run.py)
from run import cpu_model, interleaved, median, paired_ratio  # noqa: E402

import mha  # noqa: E402

VOCAB, D, LAYERS, HEADS, KV_HEADS, LLAMA_FF = 4096, 256, 4, 8, 2, 704
TRAIN_BATCH, TRAIN_LEN, PROMPT_LEN, NEW_TOKENS = 16, 128, 32, 128


def build_pair(style: str):
    """(ours, theirs) with identical weights, both in float32 on ``run.DEVICE``."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    if style == "gpt2":
        config = GPT2Config(vocab_size=VOCAB, n_positions=256, n_embd=D, n_layer=LAYERS,
                            n_head=HEADS, bos_token_id=0, eos_token_id=1)
        theirs = GPT2LMHeadModel(config)
    else:
        config = LlamaConfig(vocab_size=VOCAB, hidden_size=D, intermediate_size=LLAMA_FF,
                             num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                             num_key_value_heads=KV_HEADS, max_position_embeddings=256,
                             bos_token_id=0, eos_token_id=1)
        theirs = LlamaForCausalLM(config)
    theirs = theirs.to(run.DEVICE)
    ours = mha.GPT.from_transformers(theirs).to(run.DEVICE)  # load_state_dict keeps our device
    x = torch.randint(0, VOCAB, (2, 64), device=run.DEVICE)
    with torch.no_grad():
        diff = (ours.eval()(x) - theirs.eval()(x).logits).abs().max().item()
    assert diff < 2e-4, f"{style}: converted model differs from transformers by {diff}"
    return ours, theirs


def training_step(model, tokens, hf: bool):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()

    def step():
        loss = model(tokens, labels=tokens).loss if hf else model.loss(tokens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def greedy(model, prompt, hf: bool, static_cache: bool = False):
    model.eval()
    if hf:
        mask = torch.ones_like(prompt)
        return lambda: model.generate(prompt, attention_mask=mask, max_new_tokens=NEW_TOKENS,
                                      min_new_tokens=NEW_TOKENS, do_sample=False,
                                      pad_token_id=1)
    return lambda: mha.generate(model, prompt, NEW_TOKENS, temperature=0,
                                static_cache=static_cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default=None,
                        help="cpu, cuda, mps (default: $MHA_DEVICE, else cuda, mps, cpu)")
    args = parser.parse_args()
    device = run.set_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    reps = 5 if args.quick else 15
    import transformers
    import transformers.utils.logging as hf_logging
    hf_logging.set_verbosity_error()

    header = (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
              f"device {device}, {cpu_model()}, torch {torch.__version__}, "
              f"transformers {transformers.__version__}, "
              f"{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f}, "
              f"{reps} repetitions")
    print(header)
    rows = []
    for style in ("gpt2", "llama"):
        ours, theirs = build_pair(style)
        gen = torch.Generator().manual_seed(1)
        tokens = torch.randint(0, VOCAB, (TRAIN_BATCH, TRAIN_LEN), generator=gen).to(device)
        tasks = {f"train step {TRAIN_BATCH}x{TRAIN_LEN}": lambda hf, m: training_step(m, tokens, hf)}
        for batch in (1, 8):
            prompt = torch.randint(2, VOCAB, (batch, PROMPT_LEN), generator=gen).to(device)
            # same weights, same greedy tokens
            expected = greedy(theirs, prompt, True)()
            assert torch.equal(greedy(ours, prompt, False)(), expected)
            assert torch.equal(greedy(ours, prompt, False, static_cache=True)(), expected)
            tasks[f"greedy {NEW_TOKENS} tokens, batch {batch}"] = (
                lambda hf, m, prompt=prompt: greedy(m, prompt, hf))
            tasks[f"greedy {NEW_TOKENS} tokens, batch {batch}, ours static cache"] = (
                lambda hf, m, prompt=prompt: greedy(m, prompt, hf, static_cache=True))
        for task, make in tasks.items():
            samples = interleaved({"ours": make(False, ours), "transformers": make(True, theirs)},
                                  reps, target_s=0.0)
            ratio, lo, hi = paired_ratio(samples["ours"], samples["transformers"])
            row = (style, task, median(samples["ours"]) * 1e3,
                   median(samples["transformers"]) * 1e3, ratio, lo, hi)
            rows.append(row)
            print(f"{style:6} {task:46} ours {row[2]:8.1f} ms  transformers {row[3]:8.1f} ms  "
                  f"ratio {ratio:.2f} [{lo:.2f}, {hi:.2f}]", flush=True)

    lines = ["# Our GPT vs transformers (bench/lm.py)", "", header, "",
             "Both models hold the same weights (logits and greedy tokens checked before timing). "
             "A ratio below 1 means ours is faster. The load average in the header is other "
             "programs sharing the machine: they slow both sides, and the interleaved, paired "
             "ratios (not the absolute times) are what to read.", "",
             "| model | task | ours (ms) | transformers (ms) | ratio ours/theirs (median [IQR]) |",
             "|---|---|---:|---:|---:|"]
    lines += [f"| {s} | {t} | {a:.1f} | {b:.1f} | {r:.2f} [{lo:.2f}, {hi:.2f}] |"
              for s, t, a, b, r, lo, hi in rows]
    (HERE / "lm_results.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
