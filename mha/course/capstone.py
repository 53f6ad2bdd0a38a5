"""The capstone exercise's training run, measured by whoever calls it (the learner or the grader).

:func:`train_and_evaluate` takes three of the learner's functions, ``make_model()``,
``make_optimizer(model)`` and ``train_step(model, optimizer, batch)``, and does everything
that decides the grade itself:

1. builds the model and checks that it is untrained: its held-out loss must be above
   :func:`unigram_loss`, the loss of a model that knows only how often each token occurs
   (weights trained elsewhere and loaded in are refused);
2. feeds ``train_step`` its own batches, ``steps`` random windows of the course corpus's
   *training* ids (:func:`mha.course.corpus.random_windows`; in the graded run from a secret
   seed drawn afresh each time, :func:`secret_seed`), measuring the **CPU
   time of the training process** (:func:`training_clock`: in the grader, every process of
   the notebook's sandbox as the kernel counts them; a busy grading machine does not eat into
   it); past ``budget_seconds`` of CPU it stops with :class:`CapstoneError`. With ``relabel``
   (the graded run) the token ids of the training and held-out text are first renamed by a
   random permutation of the vocabulary drawn for this run only: the task is the same (a
   bijection of the labels changes no statistic a model can learn), but weights trained
   elsewhere, on the real ids, and loaded in by ``train_step`` are worthless;
3. fetches the trained weights as plain data (``model.state_dict()``), loads them into a
   reference :class:`mha.GPT` (GPT-2 layout, :func:`reference_gpt`; the parameter names and
   shapes must be mha.GPT's), checks the parameter budget and that the reference
   reproduces the learner's own logits, and computes the held-out loss **on the reference**
   with :func:`mha.course.corpus.held_out_loss`.

In the grader the learner's functions are proxies of the sandboxed notebook (each call is one
request), so only tensors, numbers and dicts come back; nothing the notebook reports about
its own loss is used.

Devices (:func:`training_device`): in the learner's notebook the model trains where
:func:`mha.course.device.pick_device` says (the ``device`` argument, else ``$MHA_DEVICE``, else
cuda, mps, cpu), on batches drawn as everywhere (for one seed, the same on every device);
the measurement (step 3) is always made on the CPU reference. The grader always trains on the
CPU: its sandbox has no GPU, and its budget is CPU time, which work done on a GPU would escape.

Also here: the reference modules with the exercise's interfaces (:class:`CausalSelfAttention`,
:class:`Block`, :class:`GPT`), which grade each question with correct versions of the earlier
ones, and :func:`init_gpt2_`, GPT-2's initialisation for a model with mha.GPT's names.
"""
from __future__ import annotations

import math
import operator
import secrets
import time

import torch
import torch.nn as nn

from ..gpt import GPT as _GPT
from ..gpt import Block as _Block
from ..gpt import GPTConfig
from ..masks import causal_mask
from ..multihead import MultiHeadAttention
from .corpus import corpus_ids, held_out_loss, random_windows
from .device import pick_device

VOCAB_SIZE = 512  # the course tokenizer's (corpus.corpus_tokenizer(512))

# The graded run: the data, the time and the size every learner gets, and the target.
# Measured on the course's 2-core machine: the reference solution (137k parameters, AdamW at a
# constant 3e-3) reached 3.49-3.56 over three seeds in 35-40 s of CPU time on one thread; the
# budget is CPU time of the training process (not wall time, which a busy grading machine
# stretches), about four times that.
# seed=None: the batches are drawn from fresh secret randomness at every run (:func:`secret_seed`).
GRADED_RUN = dict(steps=600, batch_size=32, context=64, budget_seconds=150.0,
                  max_parameters=200_000, seed=None, relabel=True)
TARGET_LOSS = 3.75  # nats per token on the held-out modules
MAX_PARAMETERS = GRADED_RUN["max_parameters"]


class CapstoneError(Exception):
    """The training run cannot be graded; the message says why, in the learner's terms."""


# ----------------------------------------------------------------------------- sizes

# The sizes of a model reach the grader from the learner's notebook (a state dict's shapes,
# CONFIG, the arguments of the reference classes below when the learner's code calls them).
# Each is checked against the exercise's parameter budget by arithmetic BEFORE anything is
# built from it: an empty tensor of shape [4_000_000_000, 0] costs nothing to send but says
# d_ff = 4e9, and a GPT of that size would take terabytes.

def attention_parameters(d_model: int) -> int:
    """Parameters of :class:`CausalSelfAttention` (four projections with biases)."""
    return 4 * d_model * (d_model + 1)


def block_parameters(d_model: int, d_ff: int) -> int:
    """Parameters of :class:`Block`: attention, two LayerNorms, the MLP (with biases)."""
    return attention_parameters(d_model) + 4 * d_model + 2 * d_model * d_ff + d_ff + d_model


def gpt_parameters(vocab_size: int, max_len: int, d_model: int, num_layers: int, d_ff: int,
                   tied: bool = True) -> int:
    """Parameters of :class:`GPT` (mha.GPT in GPT-2's layout), counted without building it;
    a tied output layer counts once."""
    embeddings = (vocab_size + max_len + (0 if tied else vocab_size)) * d_model
    return embeddings + num_layers * block_parameters(d_model, d_ff) + 2 * d_model


def check_budget(what: str, parameters: int, max_parameters: int = MAX_PARAMETERS) -> None:
    """Refuse a model of ``parameters`` parameters past the budget, before it is built."""
    if parameters > max_parameters:
        raise CapstoneError(f"{what} would have {parameters:,} parameters; the budget is "
                            f"{max_parameters:,}")


def _sizes(*values) -> list[int]:
    """The learner's sizes as Python integers (a float or a string is refused here)."""
    return [operator.index(v) for v in values]


# ----------------------------------------------------------------------------- references

class CausalSelfAttention(MultiHeadAttention):
    """``CausalSelfAttention(d_model, num_heads)``: ``x [B, T, D] -> [B, T, D]``, causal,
    with biases and mha.MultiHeadAttention's ``q_proj``/``k_proj``/``v_proj``/``o_proj``."""

    def __init__(self, d_model: int, num_heads: int):
        (D,) = _sizes(d_model)
        check_budget(f"CausalSelfAttention({D}, {num_heads})", attention_parameters(D))
        super().__init__(d_model, num_heads, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        return super().forward(x, mask=causal_mask(T, device=x.device))[0]


class Block(nn.Module):
    """``Block(d_model, num_heads, d_ff)``: mha.GPT's pre-LN block (GPT-2 style),
    ``x [B, T, D] -> [B, T, D]``, causal."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int):
        D, F = _sizes(d_model, d_ff)
        check_budget(f"Block({D}, {num_heads}, {F})", block_parameters(D, F))
        super().__init__()
        inner = _Block(GPTConfig(1, 1, d_model, num_heads, 1, d_ff, style="gpt2"))
        # the same submodules under the same names: norm1, attn, norm2, mlp.{fc, proj}
        self.norm1, self.attn, self.norm2, self.mlp = inner.norm1, inner.attn, inner.norm2, inner.mlp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        mask = causal_mask(T, device=x.device)
        x = x + self.attn(self.norm1(x), mask=mask)[0]
        return x + self.mlp(self.norm2(x))


class GPT(_GPT):
    """``GPT(vocab_size, max_len, d_model, num_heads, num_layers, d_ff)``: mha.GPT in
    GPT-2's layout (learned positions, LayerNorm, GELU MLP, tied output layer)."""

    def __init__(self, vocab_size: int, max_len: int, d_model: int, num_heads: int,
                 num_layers: int, d_ff: int):
        V, T, D, L, F = _sizes(vocab_size, max_len, d_model, num_layers, d_ff)
        check_budget(f"GPT({V}, {T}, d_model={D}, num_heads={num_heads}, num_layers={L}, "
                     f"d_ff={F})", gpt_parameters(V, T, D, L, F))
        super().__init__(GPTConfig(vocab_size, max_len, d_model, num_heads, num_layers, d_ff,
                                   style="gpt2"))


def init_gpt2_(model: nn.Module) -> nn.Module:
    """GPT-2's initialisation, in place, for a model with mha.GPT's parameter names: every
    ``nn.Linear`` and ``nn.Embedding`` weight from N(0, 0.02), biases 0; the projections that
    write into the residual stream (``attn.o_proj``, ``mlp.proj``) with std divided by
    ``sqrt(2 * num_layers)``. LayerNorms keep weight 1 and bias 0. Returns ``model``."""
    num_layers = max(1, len({name.split(".")[1] for name, _ in model.named_modules()
                             if name.startswith("blocks.")}))
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                std = 0.02
                if name.endswith("attn.o_proj") or name.endswith("mlp.proj"):
                    std /= math.sqrt(2 * num_layers)
                module.weight.normal_(0.0, std)
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
    return model


# ----------------------------------------------------------------------------- the reference model

def reference_gpt(state: dict, num_heads: int, max_parameters: int = MAX_PARAMETERS) -> _GPT:
    """An :class:`mha.GPT` (GPT-2 style) holding the weights ``state`` (a state dict).

    The sizes come from the shapes (``tok_embed.weight [V, D]``, ``pos_embed.weight
    [max_len, D]``, ``blocks.i.mlp.fc.weight [d_ff, D]``, the number of blocks), the number
    of heads from ``num_heads``. The output layer is tied to the token embedding when the two
    matrices are equal. Before anything is built, every tensor must be non-empty and within
    ``max_parameters`` elements, and the model those sizes describe within ``max_parameters``
    parameters. Raises :class:`CapstoneError` naming what does not fit.
    """
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CapstoneError("model.state_dict() must give a dict of tensors (your model should be "
                            "an nn.Module)")
    for name in ("tok_embed.weight", "pos_embed.weight", "blocks.0.mlp.fc.weight"):
        if name not in state:
            raise CapstoneError(f"your model has no parameter `{name}`: the names must be those of "
                                f"mha.GPT (tok_embed, pos_embed, blocks.i.{{norm1, attn.q_proj, ...}}, "
                                f"norm, lm_head); yours start {sorted(state)[:4]}")
    V, D = state["tok_embed.weight"].shape
    max_len = state["pos_embed.weight"].shape[0]
    d_ff = state["blocks.0.mlp.fc.weight"].shape[0]
    num_layers = len({k.split(".")[1] for k in state if k.startswith("blocks.")})
    tied = "lm_head.weight" not in state or torch.equal(state["lm_head.weight"],
                                                         state["tok_embed.weight"])
    check_budget(f"mha.GPT({V}, max_len={max_len}, d_model={D}, num_layers={num_layers}, "
                 f"d_ff={d_ff})", gpt_parameters(V, max_len, D, num_layers, d_ff, tied),
                 max_parameters)
    for name, tensor in state.items():  # shapes that no model within the budget has
        if tensor.numel() == 0 or tensor.numel() > max_parameters:
            raise CapstoneError(f"`{name}` has the shape {list(tensor.shape)}: a model's weights are "
                                f"neither empty nor larger than the budget of {max_parameters:,} "
                                f"parameters")
    if D % num_heads:
        raise CapstoneError(f"d_model={D} is not divisible by num_heads={num_heads}")
    config = GPTConfig(V, max_len, D, num_heads, num_layers, d_ff, style="gpt2", tie_weights=tied)
    model = _GPT(config)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines()[1:4]]
        raise CapstoneError(f"your weights do not fit mha.GPT({config.vocab_size}, max_len="
                            f"{max_len}, d_model={D}, num_heads={num_heads}, num_layers="
                            f"{num_layers}, d_ff={d_ff}): {' '.join(lines)}"[:900]) from None
    return model.eval()


def unigram_loss(vocab_size: int = VOCAB_SIZE) -> float:
    """Held-out loss (nats per token) of the best model that ignores the context: the token
    frequencies of the training ids (add-one smoothed). An untrained model cannot beat it."""
    train_ids, held_ids = corpus_ids(vocab_size)
    counts = torch.bincount(train_ids, minlength=vocab_size).double() + 1
    log_p = (counts / counts.sum()).log()
    return -log_p[held_ids].mean().item()


def _state(model) -> dict:
    state = model.state_dict()
    return dict(state) if isinstance(state, dict) else state


def _check_same_logits(model, reference, batch: torch.Tensor, when: str,
                       device: torch.device = torch.device("cpu")) -> None:
    """The learner's ``model`` (on ``device``) and the CPU ``reference`` give the same logits."""
    model.eval()
    with torch.no_grad():
        got = model(batch.to(device))
        expected = reference(batch)
    model.train()
    if isinstance(got, torch.Tensor):
        got = got.cpu()
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        shape = list(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        raise CapstoneError(f"model(tokens {list(batch.shape)}) should return logits "
                            f"{list(expected.shape)}; got {shape}")
    error = (got.double() - expected.double()).abs().max().item()
    if not error <= 1e-3:
        raise CapstoneError(
            f"{when}, mha.GPT loaded with your model's weights does not reproduce its logits "
            f"(largest difference {error:.3g}): your model computes something else with the "
            f"same weights. Its layout must be the one of questions 1-3 (pre-LN blocks, GELU "
            f"with the tanh approximation, LayerNorm eps 1e-5, learned positions, no dropout), "
            f"and num_heads must be the one you declared.")


def training_clock(train_step):
    """A clock of the CPU seconds spent by the process that trains: the notebook's sandbox
    (every process in it, read from the kernel by the grader) when ``train_step`` is the
    grader's proxy of the notebook's function, else this process (``time.process_time``)."""
    sandbox_cpu = getattr(type(train_step), "sandbox_cpu_seconds", None)
    if callable(sandbox_cpu):
        return lambda: sandbox_cpu(train_step)
    return time.process_time


def _in_sandbox(fn) -> bool:
    """Whether ``fn`` is the grader's proxy of a function of the sandboxed notebook."""
    return callable(getattr(type(fn), "sandbox_cpu_seconds", None))


def _placed(model, train_step) -> torch.device:
    """Where the learner's ``model`` is now (a proxy's: the sandbox's CPU)."""
    return torch.device("cpu") if _in_sandbox(train_step) else next(model.parameters()).device


def training_device(train_step, device=None) -> torch.device:
    """Where the learner's model trains: ``device``, else :func:`mha.course.device.pick_device`'s
    choice (``$MHA_DEVICE``, else cuda, mps, cpu). In the grader (``train_step`` is its proxy of
    the sandboxed notebook's function) always the CPU, whatever ``device`` or ``$MHA_DEVICE``
    say: the sandbox has no GPU, and the budget is the CPU time of the sandbox's processes,
    which work done on a GPU would escape."""
    return torch.device("cpu") if _in_sandbox(train_step) else pick_device(device)


def secret_seed() -> int:
    """63 bits of the operating system's randomness (``secrets``), drawn by the process that
    calls :func:`train_and_evaluate` (in the grader: outside the sandbox), a new one at every
    call: no code in the notebook can know or replay it."""
    return secrets.randbits(63)  # (seed + 1 stays within what manual_seed takes)


def relabelled(ids: tuple[torch.Tensor, ...], vocab_size: int) -> tuple[torch.Tensor, ...]:
    """``ids`` with every token id renamed by one permutation of the vocabulary, drawn from
    :func:`secret_seed` (a new one at every call: nobody can train for it)."""
    generator = torch.Generator().manual_seed(secret_seed())
    permutation = torch.randperm(vocab_size, generator=generator)
    return tuple(permutation[x] for x in ids)


def train_and_evaluate(make_model, make_optimizer, train_step, *, num_heads: int, steps: int,
                       batch_size: int, context: int, budget_seconds: float,
                       max_parameters: int, seed: int | None, vocab_size: int = VOCAB_SIZE,
                       relabel: bool = False, progress=None, device=None) -> dict:
    """Train the learner's model on the corpus within a time budget and measure it.

    ``make_model()`` -> an ``nn.Module`` with mha.GPT's parameter names (GPT-2 style,
    ``model(tokens [B, T]) -> logits [B, T, V]``) and ``num_heads`` heads;
    ``make_optimizer(model)`` -> whatever ``train_step`` needs; ``train_step(model, optimizer,
    batch)`` does one update on ``batch`` ``[batch_size, context + 1]`` (token ids; the
    model reads ``context`` tokens, position ``t`` predicts token ``t + 1``) and returns the
    training loss (a number). ``progress(step, loss)`` is called after every step if given.

    ``budget_seconds`` is CPU time of the training process (:func:`training_clock`), which
    trains on one thread (``torch.set_num_threads(1)`` during the loop, restored after), as the
    grader's sandbox does: the notebook's run and the grader's cost the same CPU time;
    ``relabel`` renames the token ids by a secret permutation first (:func:`relabelled`);
    ``seed`` seeds the batches (and the two held-out windows of the logits check, ``seed + 1``);
    ``seed=None`` (the graded run) draws it from :func:`secret_seed`, so that the batches of a
    graded run are secret too: with a public seed, a ``train_step`` that replays the draw on the
    public corpus knows which window of the real ids each batch is, and reads the permutation
    off the first one.
    ``device`` is where the model trains (:func:`training_device`: default ``$MHA_DEVICE``,
    else the fastest present; always the CPU in the grader): the model is moved there before
    ``make_optimizer(model)`` and ``train_step`` gets its batches there; the model goes back
    where it was at the end. The batches are drawn on the CPU (the same on every device) and
    the held-out loss is measured on the CPU reference. On a GPU the budget still counts this
    process's CPU time only, not the GPU's work: the grade is measured on the CPU.

    Returns ``{"held_out_loss", "fresh_loss", "unigram_loss", "train_loss" (per step),
    "seconds" (the training loop's wall time), "cpu_seconds" (its CPU time, the budgeted
    one), "parameters", "device" (where it trained), "model" (the trained model)}``.
    Raises
    :class:`CapstoneError` when the run cannot be graded (too slow, too big, already
    trained, not mha.GPT's layout).
    """
    device = training_device(train_step, device)  # an absent device fails before any work
    train_ids, held_ids = corpus_ids(vocab_size)
    if relabel:
        train_ids, held_ids = relabelled((train_ids, held_ids), vocab_size)
    if seed is None:
        seed = secret_seed()
    generator = torch.Generator().manual_seed(seed)
    model = make_model()
    if model is None:
        raise CapstoneError("make_model() returned None")

    # 1. a fresh, untrained model of the allowed size, in mha.GPT's layout
    fresh = reference_gpt(_state(model), num_heads, max_parameters)
    config = fresh.config
    if config.vocab_size != vocab_size:
        raise CapstoneError(f"the vocabulary must be the course tokenizer's, {vocab_size} tokens; "
                            f"your tok_embed has {config.vocab_size} rows")
    if config.max_len < context:
        raise CapstoneError(f"the model reads {context} tokens at once, but its max_len is "
                            f"{config.max_len}")
    parameters = sum(p.numel() for p in fresh.parameters())  # a tied matrix counts once
    if parameters > max_parameters:
        raise CapstoneError(f"your model has {parameters:,} parameters; the budget is "
                            f"{max_parameters:,}")
    probe = random_windows(held_ids, 2, context, torch.Generator().manual_seed(seed + 1))
    _check_same_logits(model, fresh, probe, "Before training", _placed(model, train_step))
    fresh_loss = held_out_loss(fresh, held_ids, context + 1)
    floor = unigram_loss(vocab_size)
    if fresh_loss <= floor:
        raise CapstoneError(
            f"the model from make_model() already has a held-out loss of {fresh_loss:.3f} before "
            f"any training, below {floor:.3f} (a model that knows only the token frequencies): "
            f"make_model() must build a freshly initialised model, not load trained weights")

    # 2. the training loop: our batches, our clock (CPU time of the training process), on one
    # thread as in the grader's sandbox (OMP_NUM_THREADS=1): with PyTorch's default of a
    # thread per core, a busy machine's waiting threads spin and the same run costs several
    # times the CPU time, so a notebook's run would fail where the grader's passes
    home = _placed(model, train_step)
    if device != home:
        model.to(device)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        clock = training_clock(train_step)
        cpu_start = clock()
        optimizer = make_optimizer(model)
        model.train()
        losses = []
        start = time.perf_counter()
        for step in range(steps):
            batch = random_windows(train_ids, batch_size, context + 1, generator)  # [B, context+1]
            loss = train_step(model, optimizer, batch.to(device))
            try:
                losses.append(float(loss))
            except (TypeError, ValueError, RuntimeError):
                raise CapstoneError(f"train_step returned {type(loss).__name__}; it should return "
                                    f"the batch's training loss (a number, e.g. loss.item())") from None
            elapsed = clock() - cpu_start
            if elapsed > budget_seconds:
                raise CapstoneError(
                    f"training took more than the budget of {budget_seconds:g} s of CPU time "
                    f"(measured on one thread, as the grader does): {elapsed:.0f} s after step "
                    f"{step + 1} of {steps}, {elapsed / (step + 1):.2f} s per step. Each step costs "
                    f"too much: a smaller model (fewer or narrower layers, a smaller d_ff) or "
                    f"less work per step in train_step")
            if progress is not None:
                progress(step, losses[-1])
        seconds, cpu_seconds = time.perf_counter() - start, clock() - cpu_start

        # 3. the trained weights, as data, measured on our reference model (on the CPU)
        trained = reference_gpt(_state(model), num_heads, max_parameters)
        if trained.config != config:
            raise CapstoneError("the model's sizes changed during training")
        _check_same_logits(model, trained, probe, "After training", device)
    finally:
        torch.set_num_threads(threads)
        if device != home:
            model.to(home)
    return {"held_out_loss": held_out_loss(trained, held_ids, context + 1),
            "fresh_loss": fresh_loss, "unigram_loss": floor, "train_loss": losses,
            "seconds": seconds, "cpu_seconds": cpu_seconds, "parameters": parameters,
            "device": str(device), "model": model}


def diagnose(result: dict) -> str:
    """A hint for a run that missed the target, from its training and held-out losses."""
    losses = result["train_loss"]
    first = sum(losses[:10]) / len(losses[:10])
    last = sum(losses[-50:]) / len(losses[-50:])
    held = result["held_out_loss"]
    if not last == last or not held == held:  # nan
        return ("\n  Hint: the loss became nan: a learning rate too large for this model? Clip "
                "the gradients (torch.nn.utils.clip_grad_norm_).")
    if last < first - 1.0 and held > first:
        return (f"\n  Hint: your training loss fell to {last:.2f} while the held-out loss is "
                f"{held:.2f}, worse than before training: the model learned something that does "
                f"not hold on new text. Does train_step make position t predict token t + 1 "
                f"(inputs batch[:, :-1], targets batch[:, 1:])?")
    if last > first - 1.0:
        return (f"\n  Hint: the training loss hardly fell ({first:.2f} -> {last:.2f}). Does "
                f"train_step call optimizer.zero_grad(), loss.backward() and optimizer.step() "
                f"every time? Is the learning rate far too small, or too large?")
    return (f"\n  Hint: the training works ({first:.2f} -> {last:.2f}) but not well enough: a "
            f"larger learning rate with a warm-up and a decay, gradient clipping, or another "
            f"shape of the model within the budgets.")
