"""Real text without a download: the source of Python's own standard library.

Every Python installation carries the source of its standard library (the folder
``sysconfig.get_paths()["stdlib"]``), in Colab too. Nobody on this course wrote it: it is
code and English prose (docstrings, comments) by the CPython developers, under the
Python Software Foundation License (PSF License Agreement, version 2; a copy is the file
``LICENSE.txt`` in that folder), which allows copying and use with the copyright notice kept.

Selection, deterministic: the pure-Python modules in :data:`MODULES` (sorted, all of them
single files in Python 3.11-3.13), read as UTF-8. Every :data:`HELD_OUT_EVERY`-th file of
that sorted list is held out, so the held-out loss measures text from modules the model
never saw. Each file is one *document*; the text of each split is its documents joined by
the special token ``<|endoftext|>`` (:data:`mha.bpe.ENDOFTEXT`), as GPT-2's training data
was, so the tokenizer gives it one id of its own and a model can learn where a module ends
and the next begins (and generation can stop there). The *names* are the same on every Python version; the *contents* change a
little between releases (Colab runs a newer Python than the 3.11 the book was executed
with), so losses measured there differ slightly: :func:`fingerprint` tells the versions apart.

Also here, shared by the language-model chapters: the trained tokenizer
(:func:`corpus_tokenizer`), random training windows (:func:`random_windows`), the training
loop (:func:`train_lm`, with AdamW's two groups of :func:`param_groups`) and the held-out
loss (:func:`held_out_loss`).
"""
from __future__ import annotations

import functools
import hashlib
import sys
import sysconfig
import threading
import time
from pathlib import Path

import torch
from torch import nn

from ..bpe import ENDOFTEXT, BPETokenizer
from ..generation import eval_mode
from ..gpt import GPT, GPTConfig
from . import run_cache
from .device import MixedPrecision, maybe_compile, pick_device

MODULES = (
    "argparse", "bisect", "calendar", "colorsys", "configparser", "contextlib", "copy",
    "dataclasses", "difflib", "enum", "fnmatch", "fractions", "functools", "gettext", "glob",
    "graphlib", "heapq", "ipaddress", "numbers", "operator", "pprint", "queue", "random",
    "reprlib", "sched", "shlex", "statistics", "string", "textwrap",
)
HELD_OUT_EVERY = 5  # files 4, 9, 14, ... of the sorted list are held out


def stdlib_dir() -> Path:
    """The folder of the running interpreter's standard library."""
    return Path(sysconfig.get_paths()["stdlib"])


def corpus_files() -> list[Path]:
    """The selected module files, sorted by name (the ones this Python has)."""
    return [stdlib_dir() / f"{name}.py" for name in sorted(MODULES)
            if (stdlib_dir() / f"{name}.py").exists()]


def split_files() -> tuple[list[Path], list[Path]]:
    """``(training files, held-out files)``: every ``HELD_OUT_EVERY``-th file is held out."""
    files = corpus_files()
    held = [f for i, f in enumerate(files) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    return [f for f in files if f not in held], held


@functools.cache
def load_documents() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(training documents, held-out documents)``: the text of each file, in order."""
    def read(files):
        texts = tuple(f.read_text(encoding="utf-8") for f in files)
        for f, text in zip(files, texts):
            if ENDOFTEXT in text:  # it would be read as a document boundary
                raise ValueError(f"{f} contains the document separator {ENDOFTEXT!r}; "
                                 f"this corpus cannot use it as a separator")
        return texts
    return tuple(read(files) for files in split_files())


@functools.cache
def load_corpus() -> tuple[str, str]:
    """``(training text, held-out text)``: each split's documents joined by ``<|endoftext|>``."""
    return tuple(ENDOFTEXT.join(documents) for documents in load_documents())


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the text's SHA-256: equal texts, equal fingerprints."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@functools.cache
def corpus_tokenizer(vocab_size: int = 512) -> BPETokenizer:
    """The BPE tokenizer trained on the training text (deterministic; cached per process):
    ``vocab_size - 257`` merges and ``<|endoftext|>`` as the last id, ``vocab_size - 1``.
    Training never counts the separator's bytes, so no merge contains a piece of it."""
    return BPETokenizer.train(load_corpus()[0], vocab_size, special_tokens=[ENDOFTEXT])


@functools.cache
def corpus_ids(vocab_size: int = 512) -> tuple[torch.Tensor, torch.Tensor]:
    """``(training ids, held-out ids)``, LongTensors ``[N]`` from :func:`corpus_tokenizer`;
    the end-of-text id stands between every two documents."""
    tok = corpus_tokenizer(vocab_size)
    return tuple(torch.tensor(tok.encode(text, allowed_special={ENDOFTEXT}))
                 for text in load_corpus())


def random_windows(ids: torch.Tensor, batch_size: int, length: int,
                   generator: torch.Generator) -> torch.Tensor:
    """``[batch_size, length]`` windows of ``ids`` at random offsets (a training batch).

    A window may span the end of one document and the start of the next, as in GPT-2's
    training: the end-of-text token between them tells the model that what follows does
    not continue what came before, and predicting the token after it is predicting how a
    module begins.
    """
    starts = torch.randint(0, len(ids) - length + 1, (batch_size,), generator=generator)
    return torch.stack([ids[s:s + length] for s in starts.tolist()])


@torch.no_grad()
def held_out_loss(model, ids: torch.Tensor, length: int, max_windows: int = 64) -> float:
    """Mean next-token loss (nats per token) over consecutive windows of ``ids``.

    Up to ``max_windows`` non-overlapping windows of ``length`` tokens, evenly spread, so
    the estimate is deterministic.
    """
    count = min(max_windows, len(ids) // length)
    step = len(ids) // count
    windows = torch.stack([ids[i * step:i * step + length] for i in range(count)])
    windows = windows.to(next(model.parameters()).device)  # the model may be on a GPU
    with eval_mode(model):
        return model.loss(windows).item()


def param_groups(model: nn.Module, weight_decay: float = 0.1) -> list[dict]:
    """AdamW's two parameter groups: weight decay on the weights of ``nn.Linear`` layers,
    none on anything else.

    Decayed: the matrices that multiply the activations (the q/k/v/output projections,
    the MLP's matrices and the output layer ``lm_head``). Not decayed: biases, norm gains
    (RMSNorm/LayerNorm weights) and embedding tables, the rule of minGPT
    (karpathy/minGPT ``configure_optimizers``). nanoGPT instead decays every tensor of 2+
    dimensions, embeddings included; we keep the tables out because AdamW's decay shrinks a
    parameter every step *even when its gradient is zero*: the rows of a learned position
    table beyond the training length (chapter 13) never get a gradient, and decay alone
    would drag them towards zero. With ``tie_weights`` the token embedding *is* the output
    layer's weight, one matrix, so it is decayed (it is listed once, under its first name).
    """
    linear_weights = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    decay, no_decay = [], []
    for p in model.parameters():  # each tensor once, a tied matrix included
        (decay if id(p) in linear_weights else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def train_lm(model, train_ids: torch.Tensor, *, steps: int, batch_size: int, length: int,
             lr: float = 3e-3, seed: int = 0, progress: bool = True, device=None,
             precision: str = "fp32", compile: bool = False, cache: bool = False) -> dict:
    """AdamW (weight decay 0.1 on the groups of :func:`param_groups`) on random windows,
    learning rate warm-up then cosine decay to lr/10.

    Returns ``{"step": [...], "loss": [...], "seconds": wall, "cpu_seconds": cpu}`` with the
    training loss of every step and the loop's wall and CPU time. ``progress`` shows a tqdm
    bar (text, on stdout).

    ``device`` (default :func:`mha.course.device.pick_device`: ``$MHA_DEVICE``, else cuda,
    mps, cpu) is where the model trains; it is moved back to where it was afterwards, so
    the code after the call runs unchanged. The batches are drawn on the CPU with the same
    ``seed`` on every device. ``precision``: ``"fp32"`` (the book's), ``"bf16"`` (autocast,
    CPU and CUDA) or ``"fp16"`` (autocast and gradient scaling, CUDA), see
    :class:`mha.course.device.MixedPrecision`. ``compile=True`` runs the loss through
    ``torch.compile`` (slow first steps, faster later ones).

    ``cache=True``: the run is computed once per machine and kept on disk
    (:func:`mha.course.run_cache.cached`); a later call with the same model (class, settings,
    initial weights), ids, arguments and code loads the trained weights into ``model`` and
    returns the run's history, its own timings included.
    """
    if cache:
        return _cached_run(model, train_ids, dict(
            steps=steps, batch_size=batch_size, length=length, lr=lr, seed=seed,
            device=str(pick_device(device)), precision=precision, compile=compile), progress)
    from tqdm import tqdm

    generator = torch.Generator().manual_seed(seed)
    device = pick_device(device)
    amp = MixedPrecision(device, precision)  # checks precision before any work is done
    home = next(model.parameters()).device  # where the model goes back to at the end
    model.to(device)
    loss_of = maybe_compile(model.loss, compile)
    optimizer = torch.optim.AdamW(param_groups(model, 0.1), lr=lr, betas=(0.9, 0.95))
    warmup = max(1, steps // 20)

    def schedule(step):  # multiplier of lr
        if step < warmup:
            return (step + 1) / warmup
        progress_ = (step - warmup) / max(1, steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + torch.cos(torch.tensor(torch.pi * progress_)).item())

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    history = {"step": [], "loss": []}
    model.train()
    start, cpu_start = time.perf_counter(), time.process_time()
    bar = tqdm(range(steps), disable=not progress, mininterval=1.0, file=sys.stdout)
    for step in bar:
        batch = random_windows(train_ids, batch_size, length + 1, generator).to(device)
        with amp.autocast():  # float32 unless precision says otherwise
            loss = loss_of(batch)
        optimizer.zero_grad(set_to_none=True)
        amp.backward(loss)
        amp.step(optimizer, model.parameters(), max_norm=1.0)  # clip, then step
        scheduler.step()
        history["step"].append(step)
        history["loss"].append(loss.item())
        bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    model.eval().to(home)
    history["seconds"] = time.perf_counter() - start
    history["cpu_seconds"] = time.process_time() - cpu_start
    return history


def _cached_run(model, train_ids: torch.Tensor, settings: dict, progress: bool,
                refresh: bool = False) -> dict:
    """:func:`train_lm` through the run cache: ``model`` ends trained either way."""
    # Dropout draws from the global generator: then the run depends on (and moves) its state.
    uses_generator = getattr(getattr(model, "config", None), "dropout", 0) > 0 or any(
        isinstance(m, nn.Dropout) and m.p > 0 for m in model.modules())
    key = {"model": type(model).__qualname__, "config": repr(getattr(model, "config", None)),
           "architecture": repr(model), "initial_weights": model.state_dict(),
           "trained": [name for name, p in model.named_parameters() if p.requires_grad],
           "rng_state": torch.get_rng_state() if uses_generator else None,
           "ids": train_ids, "settings": settings,
           "code": run_cache.code_digest(__file__, Path(__file__).with_name("device.py"))}

    def run() -> dict:
        history = train_lm(model, train_ids, progress=progress, **settings)
        return {"state": model.state_dict(), "history": history, "rng_state": torch.get_rng_state()}

    record = run_cache.cached("lm", key, run, refresh=refresh)
    model.load_state_dict(record["state"])  # a no-op after a run, the trained weights after a load
    if uses_generator:
        torch.set_rng_state(record["rng_state"])
    model.eval()
    return record["history"]


# Chapter 11's model and training run; chapter 12 samples from the same trained model.
RECIPE = dict(vocab_size=512, length=128, d_model=96, num_heads=4, num_layers=3,
              steps=600, batch_size=16, lr=3e-3, seed=0)


def recipe_model(style: str = "gpt2", **overrides) -> GPT:
    """A freshly initialised model of :data:`RECIPE`'s size (seeded)."""
    r = {**RECIPE, **overrides}
    torch.manual_seed(r["seed"])
    config = GPTConfig(r["vocab_size"], r["length"], r["d_model"], r["num_heads"],
                       r["num_layers"], 4 * r["d_model"], style=style)
    return GPT(config)


def trained_lm(retrain: bool = False, progress: bool = True) -> tuple[GPT, dict]:
    """Chapter 11's trained model and its training history: trained once per machine and
    kept on disk (:func:`train_lm` with its run cache; ``retrain`` trains again and
    overwrites).

    Training is deterministic on a given machine, so loading the cached weights gives the
    same model as training again. The history keeps the run's own wall and CPU seconds, so a
    chapter that loads the model reports the time the training took, not the time of loading.
    A lock file makes a second process (chapter 12 running beside chapter 11) wait for the
    first one's training instead of training the same model again.
    """
    settings = dict(steps=RECIPE["steps"], batch_size=RECIPE["batch_size"], length=RECIPE["length"],
                    lr=RECIPE["lr"], seed=RECIPE["seed"], device=str(pick_device(None)),
                    precision="fp32", compile=False)
    with _trained_lm_lock:  # threads share the generator: one seeds and builds the model at a time
        model = recipe_model()
        history = _cached_run(model, corpus_ids(RECIPE["vocab_size"])[0], settings, progress,
                              refresh=retrain)
    return model, history


_trained_lm_lock = threading.Lock()
