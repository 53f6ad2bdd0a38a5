"""Train a course GPT in one process or in several, with DistributedDataParallel.

One process (any device, chosen by :func:`mha.course.device.pick_device`)::

    python -m mha.course.train --steps 200 --out lm.pt

Two processes on this machine (``torchrun`` starts them and tells each its rank)::

    torchrun --nproc_per_node 2 -m mha.course.train --steps 200 --out lm.pt

Several machines: the same command on each, with ``--nnodes``, ``--node_rank`` and the
address of node 0 (see the appendix page on hardware)::

    torchrun --nnodes 2 --node_rank 0 --nproc_per_node 1 --master_addr 10.0.0.1 \\
        --master_port 29500 -m mha.course.train --steps 200 --out lm.pt

Data parallelism, step by step:

1. every process builds the same model (same seed) and DDP copies rank 0's weights to all;
2. every process draws the same *global* batch ``[G, length + 1]`` (same generator) and
   keeps its own share, rows ``rank, rank + W, rank + 2W, ...`` (as ``DistributedSampler``
   strides a dataset), ``G / W`` rows each for ``W`` processes;
3. each computes the mean loss of its rows and ``backward``; DDP averages the gradients
   over the processes (all-reduce: gloo on CPUs, NCCL on CUDA GPUs), so every process
   holds the gradient of the mean loss over the whole global batch;
4. every process takes the same optimiser step on the same gradient: the weights stay
   identical everywhere, and equal (up to float rounding) to one process trained on the
   global batch.

The optimiser and learning-rate schedule are :func:`mha.course.corpus.train_lm`'s (AdamW on
:func:`mha.course.corpus.param_groups`, warm-up then cosine decay to lr/10, clipping at 1).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F

from ..gpt import GPT, GPTConfig
from .corpus import RECIPE, corpus_ids, param_groups, random_windows
from .device import PRECISIONS, MixedPrecision, maybe_compile, pick_device


def warmup_cosine(step: int, steps: int) -> float:
    """train_lm's learning-rate multiplier: linear warm-up over steps/20, cosine to 0.1."""
    warmup = max(1, steps // 20)
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    # the cosine in float32 as train_lm computes it, so the two loops agree bit for bit
    return 0.1 + 0.9 * 0.5 * (1 + torch.cos(torch.tensor(math.pi * progress)).item())


def shard(batch: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    """This process's rows of the global batch ``[G, T]``: ``rank, rank + W, ...`` -> ``[G/W, T]``."""
    if batch.shape[0] % world_size:
        raise ValueError(f"the global batch of {batch.shape[0]} rows does not split evenly over "
                         f"{world_size} processes: choose --batch-size a multiple of {world_size}")
    return batch[rank::world_size]


def check_one_gpu_each(processes: int, visible: int) -> None:
    """Stop, with one line that names the fix, if this machine runs more processes than it
    has visible GPUs.

    Each process takes ``cuda:LOCAL_RANK``; without the check the process whose GPU is
    missing dies inside ``torch.cuda.set_device`` ("invalid device ordinal") and its partners
    wait for it. Every process of the machine stops, not only the one without a GPU.
    """
    if processes > visible:
        fix = f"start at most {visible} (--nproc_per_node {visible}) or " if visible else ""
        raise SystemExit(f"mha.course.train: {processes} processes on this machine but "
                         f"{visible} visible GPU(s): each process needs its own GPU; {fix}"
                         "add --device cpu to train on CPU processes (gloo)")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m mha.course.train", description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=RECIPE["steps"])
    p.add_argument("--batch-size", type=int, default=RECIPE["batch_size"],
                   help="the GLOBAL batch, split over the processes (default %(default)s)")
    p.add_argument("--length", type=int, default=RECIPE["length"], help="tokens per window read")
    p.add_argument("--d-model", type=int, default=RECIPE["d_model"])
    p.add_argument("--num-heads", type=int, default=RECIPE["num_heads"])
    p.add_argument("--num-layers", type=int, default=RECIPE["num_layers"])
    p.add_argument("--vocab-size", type=int, default=RECIPE["vocab_size"])
    p.add_argument("--style", choices=["gpt2", "llama"], default="gpt2")
    p.add_argument("--lr", type=float, default=RECIPE["lr"])
    p.add_argument("--seed", type=int, default=RECIPE["seed"])
    p.add_argument("--ids", type=Path, default=None,
                   help="token ids to train on (a file of torch.save(LongTensor [N])); "
                        "default: the course corpus's training ids")
    p.add_argument("--device", default=None, help="cpu, cuda, mps (default: $MHA_DEVICE, "
                   "else the fastest present); under torchrun on CUDA each process takes cuda:LOCAL_RANK")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (slow start)")
    p.add_argument("--out", type=Path, default=None, help="save the trained weights here (rank 0)")
    p.add_argument("--save-every-rank", action="store_true",
                   help="each process also saves its own weights to OUT.rank<N> (for checking)")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    """Train as the arguments say; returns a summary (also printed as JSON by rank 0)."""
    args = parse_args(argv)
    world_size = int(os.environ.get("WORLD_SIZE", "1"))  # set by torchrun
    rank, local_rank = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    device = pick_device(args.device)
    if device.type == "cuda" and world_size > 1:
        # torchrun sets LOCAL_WORLD_SIZE (--nproc_per_node); another launcher may not, and
        # then at least this process's index must name a GPU
        here = int(os.environ.get("LOCAL_WORLD_SIZE", local_rank + 1))
        check_one_gpu_each(here, torch.cuda.device_count())
        device = torch.device("cuda", local_rank)  # one GPU per process on each machine
        torch.cuda.set_device(device)
    distributed = world_size > 1
    if distributed:
        if device.type == "mps":
            raise RuntimeError("torch.distributed has no backend for MPS: use --device cpu")
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")

    ids = torch.load(args.ids, weights_only=True) if args.ids else corpus_ids(args.vocab_size)[0]
    torch.manual_seed(args.seed)  # the same initial weights in every process
    config = GPTConfig(args.vocab_size, args.length, args.d_model, args.num_heads,
                       args.num_layers, 4 * args.d_model, style=args.style)
    model = GPT(config).to(device)
    amp = MixedPrecision(device, args.precision)
    net = model
    if distributed:  # broadcasts rank 0's weights, then averages gradients in backward
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)
    net = maybe_compile(net, args.compile)
    optimizer = torch.optim.AdamW(param_groups(model, 0.1), lr=args.lr, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_cosine(s, args.steps))
    generator = torch.Generator().manual_seed(args.seed)  # the same global batches everywhere

    losses = []
    model.train()
    start = time.perf_counter()
    for _ in range(args.steps):
        batch = random_windows(ids, args.batch_size, args.length + 1, generator)  # [G, T+1]
        mine = shard(batch, rank, world_size).to(device)  # [G/W, T+1]
        with amp.autocast():
            logits = net(mine[:, :-1])  # through the DDP wrapper, so it syncs the gradients
            loss = F.cross_entropy(logits.flatten(0, 1), mine[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        amp.backward(loss)
        amp.step(optimizer, model.parameters(), max_norm=1.0)
        scheduler.step()
        mean_loss = loss.detach().float()
        if distributed:  # the global batch's loss, for the log
            dist.all_reduce(mean_loss)
            mean_loss /= world_size
        losses.append(mean_loss.item())
    seconds = time.perf_counter() - start

    summary = {"world_size": world_size, "backend": dist.get_backend() if distributed else None,
               "device": str(device), "precision": args.precision, "steps": args.steps,
               "global_batch": args.batch_size, "seconds": seconds,
               "tokens_per_second": args.steps * args.batch_size * args.length / seconds,
               "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None}
    state = {k: v.cpu() for k, v in model.state_dict().items()}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.out and args.save_every_rank:
        torch.save(state, args.out.with_name(f"{args.out.name}.rank{rank}"))
    if args.out and rank == 0:
        torch.save({"config": vars(config), "state": state, "losses": losses, "summary": summary},
                   args.out)
    if rank == 0:
        print(json.dumps(summary), flush=True)
    if distributed:
        dist.destroy_process_group()
    return summary


if __name__ == "__main__":
    main()
