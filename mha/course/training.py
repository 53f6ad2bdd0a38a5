"""Training and evaluation helpers for the number-words task (:mod:`mha.course.numerals`).

* training uses *teacher forcing*: the decoder reads the gold target shifted right by
  one (``<bos>`` first) and predicts every position in one parallel forward pass;
* evaluation measures both the teacher-forced :func:`token_accuracy` and the
  free-running :func:`exact_match` of :func:`mha.greedy_decode`, whose gap is the
  price of exposure bias.

:func:`train` takes ``device``, ``precision`` and ``compile`` options (see
:mod:`mha.course.device`); the batches are always built on the CPU and moved to the model.
"""
from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from ..decoding import greedy_decode
from ..generation import eval_mode
from .numerals import (BOS_ID, EOS_ID, PAD_ID, SRC_VOCAB, TGT_VOCAB, Batch, decode_target,
                       make_batch, random_batches, split_numbers)
from ..transformer import Transformer
from . import run_cache
from .device import MixedPrecision, maybe_compile, pick_device


def shift_right(labels: torch.Tensor, bos_id: int = BOS_ID) -> torch.Tensor:
    """Decoder input for teacher forcing: ``<bos>`` then the labels, one step late.

    ``labels`` ``[B, T]`` = ``y_1 .. y_n <eos> <pad>..`` -> ``[B, T]`` =
    ``<bos> y_1 .. y_n ..``: position ``t`` of the input holds the token *before*
    label ``t``, so predicting ``labels[:, t]`` from inputs ``0..t`` is next-token
    prediction. The last label column is never an input.
    """
    if labels.dim() != 2:
        raise ValueError(f"labels must be [B, T]; got shape {list(labels.shape)}")
    bos = torch.full_like(labels[:, :1], bos_id)
    return torch.cat([bos, labels[:, :-1]], dim=1)


def device_of(model: torch.nn.Module) -> torch.device:
    """The device of the model's parameters (where its inputs must be)."""
    return next(model.parameters()).device


def batch_to(batch: Batch, device: torch.device) -> Batch:
    """The same batch with its tensors on ``device`` (itself if they are there already)."""
    if batch.src.device == torch.device(device):
        return batch
    return dataclasses.replace(batch, src=batch.src.to(device),
                               src_lengths=batch.src_lengths.to(device),
                               labels=batch.labels.to(device))


def teacher_forced_logits(model: Transformer, batch: Batch) -> torch.Tensor:
    """One forward pass over the whole shifted target: logits ``[B, T, V]``."""
    return model(batch.src, shift_right(batch.labels), src_mask=batch.src_mask)


def sequence_loss(logits: torch.Tensor, labels: torch.Tensor, pad_id: int = PAD_ID) -> torch.Tensor:
    """Mean cross-entropy over the non-padding label positions."""
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=pad_id)


def token_accuracy(logits: torch.Tensor, labels: torch.Tensor, pad_id: int = PAD_ID) -> float:
    """Fraction of non-padding positions whose argmax equals the label.

    ``logits`` ``[B, T, V]`` (or already-chosen ids ``[B, T]``), ``labels`` ``[B, T]``.
    """
    predicted = logits.argmax(-1) if logits.dim() == 3 else logits
    if predicted.shape != labels.shape:
        raise ValueError(f"predictions {list(predicted.shape)} and labels "
                         f"{list(labels.shape)} must have the same shape")
    real = labels != pad_id
    return ((predicted == labels) & real).sum().item() / max(1, real.sum().item())


def exact_match(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Fraction of predicted strings equal to their reference (whole output right)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not references:
        raise ValueError("exact_match needs at least one example")
    return sum(p == r for p, r in zip(predictions, references)) / len(references)


def translate(model: Transformer, batch: Batch, use_cache: bool = True,
              max_len: int = 8) -> list[str]:
    """Free-running greedy decoding of a batch -> digit strings."""
    batch = batch_to(batch, device_of(model))
    out = greedy_decode(model, batch.src, max_len, BOS_ID, EOS_ID, use_cache=use_cache,
                        src_mask=batch.src_mask)
    return [decode_target(row) for row in out.tolist()]


@torch.no_grad()
def evaluate(model: Transformer, numbers: Sequence[int]) -> dict[str, float]:
    """Teacher-forced loss and token accuracy, and free-running exact match."""
    with eval_mode(model):
        batch = batch_to(make_batch(numbers), device_of(model))
        logits = teacher_forced_logits(model, batch)
        return {
            "loss": sequence_loss(logits, batch.labels).item(),
            "token_accuracy": token_accuracy(logits, batch.labels),
            "exact_match": exact_match(translate(model, batch), batch.targets),
        }


def build_model(num_heads: int = 4, d_model: int = 64, num_layers: int = 2,
                d_ff: int = 128, seed: int = 0, **kwargs) -> Transformer:
    """A small encoder-decoder for the numerals task, initialised from ``seed``."""
    torch.manual_seed(seed)
    return Transformer(len(SRC_VOCAB), len(TGT_VOCAB), d_model, num_heads, num_layers, d_ff,
                       max_len=kwargs.pop("max_len", 512), **kwargs)


@dataclass
class History:
    """What :func:`train` records: the loss per step and periodic evaluations.

    ``progress_bar`` is the progress bar's final line (empty without ``progress=True``), for
    notebooks that clear the live bar's redraws and print its end state once.
    """

    loss: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    token_accuracy: list[float] = field(default_factory=list)
    exact_match: list[float] = field(default_factory=list)
    seconds: float = 0.0
    progress_bar: str = ""


def train(model: Transformer, numbers: Sequence[int], steps: int = 1500,
          batch_size: int = 64, lr: float = 3e-3, warmup: int = 100, seed: int = 0,
          eval_numbers: Sequence[int] | None = None, eval_every: int = 0,
          progress: bool = False,
          on_step: Callable[[int, Transformer], None] | None = None,
          device=None, precision: str = "fp32", compile: bool = False,
          cache: bool = False) -> History:
    """Teacher-forced training with Adam, linear warm-up then cosine decay to zero.

    Batches come from :func:`mha.course.numerals.random_batches` with ``seed``, so two calls
    with the same arguments on a freshly built model follow the same path. Every
    ``eval_every`` steps (0 = never) the model is scored on ``eval_numbers`` with
    :func:`evaluate`. ``progress=True`` shows a tqdm bar on stdout. ``on_step(step, model)``
    is called after every optimiser step (e.g. to keep a copy of an early checkpoint).

    ``device`` (default :func:`mha.course.device.pick_device`) is where the model trains;
    it is moved back to where it was at the end. ``precision`` is ``"fp32"`` (the book's),
    ``"bf16"`` or ``"fp16"`` (:class:`mha.course.device.MixedPrecision`); ``compile=True``
    runs the forward pass through ``torch.compile``.

    ``cache=True``: the run is computed once per machine and kept on disk
    (:func:`mha.course.run_cache.cached`); a later call with the same model (class, initial
    weights), numbers, arguments, global random state and code loads the trained weights (and
    last gradients) into ``model``, sets the global random state to where the run left it and
    returns the run's :class:`History`, its own ``seconds`` included. Ask for it only when
    those decide the run: a hook on the model or a patched method is not in the key. A run
    with ``on_step`` or ``progress`` (they must see the training happen), with ``compile`` or
    off the CPU is computed even then.
    """
    device = pick_device(device)
    amp = MixedPrecision(device, precision)  # checks precision before any work is done
    if (cache and on_step is None and not progress and not compile and device.type == "cpu"
            and device_of(model).type == "cpu"):
        settings = dict(steps=steps, batch_size=batch_size, lr=lr, warmup=warmup, seed=seed,
                        eval_every=eval_every, precision=precision)
        return _cached_train(model, numbers, eval_numbers, settings)
    home = device_of(model)  # where the model goes back to at the end
    model.to(device)
    forward = maybe_compile(model, compile)  # shares its parameters with model
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    history = History()
    batches = random_batches(numbers, batch_size, steps, seed)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=steps, file=sys.stdout, desc="training", mininterval=0.5)
    start = time.perf_counter()
    model.train()
    for step, batch in enumerate(batches, start=1):
        batch = batch_to(batch, device)
        with amp.autocast():  # float32 unless precision says otherwise
            loss = sequence_loss(teacher_forced_logits(forward, batch), batch.labels)
        optimizer.zero_grad(set_to_none=True)
        amp.backward(loss)
        amp.step(optimizer, model.parameters(), max_norm=1.0)  # clip, then step
        scheduler.step()
        history.loss.append(loss.item())
        if on_step is not None:
            on_step(step, model)
        if eval_numbers is not None and eval_every and (step % eval_every == 0 or step == steps):
            scores = evaluate(model, eval_numbers)
            history.eval_step.append(step)
            history.token_accuracy.append(scores["token_accuracy"])
            history.exact_match.append(scores["exact_match"])
        if bar is not None:
            bar.update(1)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{history.loss[-1]:.2g}")
    if bar is not None:
        bar.close()
        history.progress_bar = str(bar)
    history.seconds = time.perf_counter() - start
    model.eval().to(home)
    return history


def _cached_train(model: Transformer, numbers: Sequence[int],
                  eval_numbers: Sequence[int] | None, settings: dict) -> History:
    """:func:`train` on the CPU through the run cache: ``model`` ends trained either way."""
    here = Path(__file__)
    key = {"model": type(model).__qualname__, "architecture": repr(model),
           "initial_weights": model.state_dict(),
           "trained": [name for name, p in model.named_parameters() if p.requires_grad],
           "numbers": torch.tensor(list(numbers), dtype=torch.long),
           "eval_numbers": None if eval_numbers is None
           else torch.tensor(list(eval_numbers), dtype=torch.long),
           "settings": settings,
           # the run may draw from the global generator (dropout): it depends on its state
           "rng_state": torch.get_rng_state(),
           "code": run_cache.code_digest(here, here.with_name("numerals.py"),
                                         here.with_name("device.py"))}

    def run() -> dict:
        history = train(model, numbers, eval_numbers=eval_numbers, device="cpu", cache=False,
                        **settings)
        return {"state": model.state_dict(), "history": dataclasses.asdict(history),
                "grads": {name: p.grad for name, p in model.named_parameters()
                          if p.grad is not None},
                "rng_state": torch.get_rng_state()}

    record = run_cache.cached("numerals", key, run)
    model.load_state_dict(record["state"])  # a no-op after a run, the trained weights after a load
    for name, p in model.named_parameters():
        p.grad = record["grads"][name].clone() if name in record["grads"] else None
    torch.set_rng_state(record["rng_state"])
    model.eval()
    return History(**record["history"])


def train_numeral_model(num_heads: int = 4, d_model: int = 64, num_layers: int = 2,
                        d_ff: int = 128, steps: int = 1500, batch_size: int = 64,
                        seed: int = 0, progress: bool = False, eval_every: int = 0,
                        n_test: int = 1000, cache: bool = True,
                        **train_kwargs) -> tuple[Transformer, History]:
    """Build and train the course's numerals model in one seeded call.

    Uses the split of :func:`mha.course.numerals.split_numbers` (``n_test`` held out with
    ``seed=0``), evaluating on the held-out numbers when ``eval_every > 0``.
    Returns the trained model (in eval mode) and its :class:`History`. The model is built
    here, so nothing but the arguments decides the run: it is cached (``cache`` of
    :func:`train`) unless ``cache=False``.
    """
    train_numbers, test_numbers = split_numbers(n_test=n_test)
    model = build_model(num_heads, d_model, num_layers, d_ff, seed=seed)
    history = train(model, train_numbers, steps=steps, batch_size=batch_size, seed=seed,
                    eval_numbers=test_numbers, eval_every=eval_every, progress=progress,
                    cache=cache, **train_kwargs)
    return model, history
