"""Is `mha` fast at the sizes a GPU is for? Issue 33's table, measured side by side in one run.

    .venv/bin/python bench/gpu.py                        # real sizes, on the GPU (minutes)
    .venv/bin/python bench/gpu.py --sizes small          # tiny sizes: runs on a CPU in seconds
    .venv/bin/python bench/gpu.py --sizes small --no-compile   # without torch.compile's rows

Measured (each comparison interleaved, medians, as in bench/run.py):
  1. causal multi-head attention, forward + backward, ours (``is_causal=True``) against
     ``nn.MultiheadAttention(..., is_causal=True)`` with the same weights, in float32 and
     bfloat16, at (B=8, L=128, D=512, H=8), (B=8, L=1024, D=1024, H=16) and
     (B=2, L=4096, D=1024, H=16);
  2. one training step (forward, backward, AdamW) of a GPT-2-124M-shaped model, B=8, T=1024,
     bfloat16 autocast on a GPU: ``mha.GPT`` eager and with ``torch.compile(model.loss)``,
     against transformers' ``GPT2LMHeadModel`` with the same weights; tokens per second and
     model-FLOP utilisation (6 N + 12 layers D T FLOPs per token, PaLM's count, over the
     device's dense bf16 peak, from the table PEAK_TFLOPS; "unknown" for other devices);
  3. greedy generation of 128 tokens after a 32-token prompt at batch 1 and 8 with no cache,
     the static cache and the compiled static cache (``mha.generate(..., compile=True)``),
     against transformers' ``generate`` (its default cache), same weights.

Random weights throughout (speed does not depend on them). Writes bench/gpu_results.md
(``--out`` to change) with the device named.
"""
from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

import mha

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as timing  # noqa: E402  bench/run.py: interleaved timing, sync, the device

HERE = Path(__file__).resolve().parent

# dense (no sparsity) bf16 tensor-core peak, TFLOP/s, from the vendors' data sheets
PEAK_TFLOPS = {"H200": 989.0, "H100 PCIe": 756.0, "H100": 989.0, "A100": 312.0,
               "L40S": 362.0, "L4": 121.0, "A10G": 70.0, "A10": 125.0, "T4": 65.0}

SIZES = {
    "full": dict(
        mha=[(8, 128, 512, 8), (8, 1024, 1024, 16), (2, 4096, 1024, 16)],
        gpt=dict(vocab=50257, max_len=1024, d_model=768, heads=12, layers=12),
        train=dict(batch=8, T=1024), prompt=32, new_tokens=128, batches=(1, 8),
        reps=15, decode_reps=3),
    "small": dict(
        mha=[(2, 32, 64, 4), (1, 64, 64, 4)],
        gpt=dict(vocab=128, max_len=64, d_model=32, heads=4, layers=2),
        train=dict(batch=2, T=32), prompt=4, new_tokens=8, batches=(1, 2),
        reps=2, decode_reps=1),
}


def peak_tflops(device: torch.device) -> tuple[str, float | None]:
    """The device's name and its dense bf16 peak (None: not in PEAK_TFLOPS)."""
    if device.type != "cuda":
        return timing.cpu_model() if device.type == "cpu" else device.type, None
    name = torch.cuda.get_device_name(device)
    for key, peak in PEAK_TFLOPS.items():  # most specific first ("H100 PCIe" before "H100")
        if key in name:
            return name, peak
    return name, None


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


# ----------------------------------------------------------------------------- 1. attention
def attention_rows(sizes, reps, device) -> list[list[str]]:
    rows = []
    dtypes = [torch.float32, torch.bfloat16]
    for B, L, D, H in sizes:
        for dtype in dtypes:
            torch.manual_seed(0)
            ours = mha.MultiHeadAttention(D, H).to(device, dtype)
            theirs = mha.course.references.torch_twin(ours.float()).to(device, dtype)
            ours.to(dtype)
            x = torch.randn(B, L, D, device=device, dtype=dtype, requires_grad=True)
            blocked = ~mha.causal_mask(L, device=device)  # nn's polarity: True = blocked

            def run_ours():
                ours(x, is_causal=True)[0].sum().backward()

            def run_theirs():
                theirs(x, x, x, attn_mask=blocked, is_causal=True,
                       need_weights=False)[0].sum().backward()

            s = timing.interleaved({"ours": run_ours, "theirs": run_theirs}, reps)
            ratio, lo, hi = timing.paired_ratio(s["ours"], s["theirs"])
            name = str(dtype).removeprefix("torch.")
            rows.append([f"B={B} L={L} D={D} H={H}", name, ms(timing.median(s["ours"])),
                         ms(timing.median(s["theirs"])), f"{ratio:.2f} ({lo:.2f}-{hi:.2f})"])
            del x
    return rows


# ----------------------------------------------------------------------------- 2. training
def gpt2_pair(shape, device):
    """transformers' GPT2LMHeadModel with random weights, and mha.GPT with the same ones."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=shape["vocab"], n_positions=shape["max_len"],
                        n_embd=shape["d_model"], n_head=shape["heads"], n_layer=shape["layers"],
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    hf = GPT2LMHeadModel(config)
    hf.config._attn_implementation = "sdpa"
    ours = mha.GPT.from_transformers(hf)
    return ours.to(device), hf.to(device)


def model_flops_per_token(model: mha.GPT, T: int) -> float:
    """6 N + 12 n_layer D T: forward and backward of every weight, plus attention's two
    T x T products (PaLM, appendix B); N without the position table."""
    c = model.config
    N = sum(p.numel() for p in model.parameters()) - (model.pos_embed.weight.numel()
                                                     if model.pos_embed is not None else 0)
    return 6 * N + 12 * c.num_layers * c.d_model * T


def training_rows(shape, train, reps, device, compile_too) -> list[list[str]]:
    ours, hf = gpt2_pair(shape, device)
    ours.train(), hf.train()
    B, T = train["batch"], train["T"]
    tokens = torch.randint(shape["vocab"], (B, T + 1), device=device)
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
                else torch.autocast("cpu", enabled=False))
    opt_ours = torch.optim.AdamW(ours.parameters(), lr=1e-4)
    opt_hf = torch.optim.AdamW(hf.parameters(), lr=1e-4)

    def step(loss_fn, opt):
        def run():
            with autocast:
                loss = loss_fn()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return run

    candidates = {
        "mha.GPT eager": step(lambda: ours.loss(tokens), opt_ours),
        "transformers": step(lambda: hf(tokens[:, :-1], labels=tokens[:, :-1]).loss, opt_hf),
    }
    compile_s = None
    if compile_too:
        compiled_loss = torch.compile(ours.loss)
        start = time.perf_counter()
        step(lambda: compiled_loss(tokens), opt_ours)()  # compiles forward and backward
        timing.sync()
        compile_s = time.perf_counter() - start
        candidates["mha.GPT compiled"] = step(lambda: compiled_loss(tokens), opt_ours)
    s = timing.interleaved(candidates, reps)
    name, peak = peak_tflops(device)
    flops = model_flops_per_token(ours, T) * B * T
    rows = []
    for label in ("mha.GPT eager", "mha.GPT compiled", "transformers"):
        if label not in s:
            rows.append([label, "not run (--no-compile)", "", "", ""])
            continue
        t = timing.median(s[label])
        mfu = "unknown peak" if peak is None else f"{100 * flops / t / (peak * 1e12):.1f}%"
        vs = "1.00" if label == "transformers" else \
            "{:.2f}".format(timing.paired_ratio(s[label], s["transformers"])[0])
        rows.append([label, ms(t), f"{B * T / t:,.0f}", mfu, vs])
    if compile_s is not None:
        rows.append(["(compiling the step took)", f"{compile_s:.1f} s", "", "", ""])
    return rows


# ----------------------------------------------------------------------------- 3. decoding
def decoding_rows(shape, prompt_len, new_tokens, batches, reps, device,
                  compile_too) -> list[list[str]]:
    ours, hf = gpt2_pair(shape, device)
    ours.eval(), hf.eval()
    rows = []
    for B in batches:
        prompt = torch.randint(shape["vocab"], (B, prompt_len), device=device)

        def ours_run(**kwargs):
            return lambda: mha.generate(ours, prompt, new_tokens, temperature=0, **kwargs)

        candidates = {
            "no cache": ours_run(use_cache=False),
            "static cache": ours_run(static_cache=True),
        }
        compile_s = None
        if compile_too:
            start = time.perf_counter()
            ours_run(static_cache=True, compile=True)()  # compiles once for this shape
            timing.sync()
            compile_s = time.perf_counter() - start
            candidates["compiled static cache"] = ours_run(static_cache=True, compile=True)

        def hf_run():
            with torch.inference_mode():
                return hf.generate(prompt, attention_mask=torch.ones_like(prompt),
                                   max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                   do_sample=False, pad_token_id=0)
        candidates["transformers generate"] = hf_run
        same = torch.equal(candidates["static cache"]().cpu(), hf_run().cpu())
        s = timing.interleaved(candidates, reps, target_s=0.0)
        none = s["no cache"]
        for label in ("no cache", "static cache", "compiled static cache",
                      "transformers generate"):
            if label not in s:
                rows.append([f"B={B}", label, "not run (--no-compile)", "", ""])
                continue
            speedup = timing.paired_ratio(none, s[label])[0]
            vs_hf = timing.paired_ratio(s[label], s["transformers generate"])[0]
            rows.append([f"B={B}", label, ms(timing.median(s[label])), f"{speedup:.1f}x",
                         f"{vs_hf:.2f}"])
        if compile_s is not None:
            rows.append([f"B={B}", "(compiling took)", f"{compile_s:.1f} s", "", ""])
        rows.append([f"B={B}", "same tokens as transformers", str(same), "", ""])
    return rows


# ----------------------------------------------------------------------------- report
def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", choices=sorted(SIZES), default="full")
    parser.add_argument("--device", default=None, help="cuda, mps or cpu (default: the "
                        "course's rule, $MHA_DEVICE, else cuda, mps, cpu)")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the torch.compile rows (compiling takes minutes on a CPU)")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads on a CPU")
    parser.add_argument("--out", type=Path, default=HERE / "gpu_results.md")
    args = parser.parse_args(argv)
    device = timing.set_device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    size = SIZES[args.sizes]
    compile_too = not args.no_compile
    name, peak = peak_tflops(device)
    print(f"device: {device} ({name}), sizes: {args.sizes}", flush=True)

    import transformers
    g, tr = size["gpt"], size["train"]
    parts = [
        "# bench/gpu.py results",
        f"Device: **{name}** ({device.type}); sizes: `{args.sizes}`; torch {torch.__version__}, "
        f"transformers {transformers.__version__}, Python {platform.python_version()}; "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Medians of "
        "interleaved repetitions; a ratio is the median of per-repetition ratios "
        "(quartiles in brackets). Produced by `python bench/gpu.py --sizes "
        f"{args.sizes}`{' --no-compile' if args.no_compile else ''}.",
    ]

    def write(*section):  # after every section: a run cut short keeps what it measured
        parts.extend(section)
        args.out.write_text("\n\n".join(parts) + "\n")
        print("\n\n".join(section), flush=True)

    print("1. attention forward + backward ...", flush=True)
    attention = attention_rows(size["mha"], size["reps"], device)
    write("## 1. Causal multi-head attention, forward + backward",
          "Ours: `mha.MultiHeadAttention(x, is_causal=True)`; reference: "
          "`nn.MultiheadAttention(x, x, x, attn_mask=causal, is_causal=True, "
          "need_weights=False)`, same weights. Target: ratio <= 1.0.",
          table(["shape", "dtype", "ours", "nn.MultiheadAttention", "ours / theirs"], attention))
    print("2. training step ...", flush=True)
    training = training_rows(size["gpt"], size["train"], max(3, size["reps"] // 3), device,
                             compile_too)
    write("## 2. Training step, GPT-2 124M shape" if args.sizes == "full" else
          "## 2. Training step (small GPT-2-style model)",
          f"vocab {g['vocab']}, D={g['d_model']}, {g['layers']} layers, {g['heads']} heads; "
          f"B={tr['batch']}, T={tr['T']}; "
          + ("bfloat16 autocast" if device.type == "cuda" else "float32")
          + f"; AdamW. Peak for MFU: "
          f"{'unknown' if peak is None else f'{peak:.0f} TFLOP/s bf16'}. "
          "Targets (GPU): compiled >= 35% MFU and <= 0.9x transformers' time.",
          table(["model", "time per step", "tokens/s", "MFU", "vs transformers"], training))
    print("3. greedy generation ...", flush=True)
    decoding = decoding_rows(size["gpt"], size["prompt"], size["new_tokens"], size["batches"],
                             size["decode_reps"], device, compile_too)
    write("## 3. Greedy generation",
          f"{size['new_tokens']} new tokens after a {size['prompt']}-token prompt, "
          "`mha.generate(temperature=0)` against `transformers` `generate(do_sample=False)`. "
          "Targets (GPU): compiled static cache >= 8x faster than no cache, <= 0.5x "
          "transformers' time.",
          table(["batch", "ours", "time", "speed-up vs no cache", "vs transformers"], decoding))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
