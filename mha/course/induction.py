"""Induction heads on a CPU: the copy task, an attention-only model, scores and ablation.

The task (:func:`copy_batch`): each sequence is ``T`` random tokens out of ``V``, except that
one segment of length ``P`` (random, ``min_len <= P <= max_len``) starting at ``src`` is
copied to a random later position ``dst`` (``dst >= src + P``, so the two never overlap)::

    tokens[b, dst + i] == tokens[b, src + i]   for i = 0 .. P - 1

Nothing but the copy can be predicted, and its first token cannot either (it is random
too). So the loss that matters, :func:`copy_loss`, is the mean cross-entropy over the copy
*leaving out its first token*: targets ``dst + 1 .. dst + P - 1``, predicted by the logits
at positions ``dst .. dst + P - 2``. A model that has not learned to copy scores about
``ln V`` nats there; one that copies scores near 0.

The model (:class:`AttentionOnly`) has no MLP: token embedding (+ learned positions, or RoPE
inside attention), ``num_layers`` pre-LayerNorm blocks ``x = x + attn(norm(x))`` with causal
:class:`mha.MultiHeadAttention`, a final LayerNorm and an output layer. Two layers can
build an *induction head*: a layer-0 head copies each token's predecessor into its position
(a *previous-token head*), and a layer-1 head whose query is the current token then finds the
position whose predecessor matches it, i.e. the token right after the earlier occurrence,
and copies that token to the output. One layer cannot compose two heads that way.

The scores (exact definitions, weights ``A`` ``[B, H, T, T]``, query row, key column):

* :func:`previous_token_score`: mean over the batch and over queries ``t = 1 .. T - 1`` of
  ``A[b, h, t, t - 1]``, the weight a head puts on the token just before the query;
* :func:`induction_score` (``offset=1``, the textbook one): mean over the batch and over
  ``i = 0 .. P - 2`` of ``A[b, h, dst + i, src + i + offset]``: the query is the copy's
  ``i``-th token, whose earlier occurrence is ``src + i``; ``offset=1`` is the position
  right after that occurrence, whose token is the one to predict next. The queries are
  exactly the positions whose predictions :func:`copy_loss` scores. ``offset=0`` is the
  earlier occurrence itself, other offsets are controls.

Ablation (:func:`ablate_heads`): a head is removed by zeroing its output, the head's
``d_k`` slice of the merged heads, just before the output projection ``o_proj``.

Exercise 16 gives the learner a model trained here with a seed chapter 15 does not show
(:func:`exercise_model`), so that its heads must be found by measurement.
"""
from __future__ import annotations

import contextlib
import functools
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..masks import causal_mask
from ..multihead import MultiHeadAttention
from ..norms import LayerNorm
from . import run_cache


@dataclass
class CopyBatch:
    """A batch of the copy task.

    ``tokens`` ``[B, T]``; ``src``, ``dst``, ``length`` ``[B]``: the segment
    ``tokens[b, src:src+length]`` is repeated at ``tokens[b, dst:dst+length]``.
    """

    tokens: torch.Tensor
    src: torch.Tensor
    dst: torch.Tensor
    length: torch.Tensor

    def target_mask(self) -> torch.Tensor:
        """``[B, T - 1]`` bool: which next-token predictions the copy loss scores.

        Column ``t`` is the prediction of ``tokens[:, t + 1]`` from positions ``0 .. t``;
        it is scored when ``t + 1`` lies in the copy but is not its first token, i.e.
        ``dst <= t <= dst + length - 2``.
        """
        B, T = self.tokens.shape
        t = torch.arange(T - 1)
        return (t >= self.dst[:, None]) & (t <= (self.dst + self.length - 2)[:, None])


def copy_batch(batch_size: int, seq_len: int = 64, vocab_size: int = 64, min_len: int = 16,
               max_len: int = 32, generator: torch.Generator | None = None) -> CopyBatch:
    """Random token sequences ``[B, T]``, each with one segment copied to a later position.

    Per sequence: ``P`` uniform in ``[min_len, max_len]``, ``src`` uniform in
    ``[0, T - 2P]``, ``dst`` uniform in ``[src + P, T - P]`` (the copy starts after the
    segment ends and fits in the sequence). All draws use ``generator``.
    """
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len; got min_len={min_len}, max_len={max_len}")
    if 2 * max_len > seq_len:
        raise ValueError(f"a segment of max_len={max_len} and its copy need 2 * max_len = "
                         f"{2 * max_len} positions, but seq_len={seq_len}")
    g = generator
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=g)
    length = torch.randint(min_len, max_len + 1, (batch_size,), generator=g)
    # uniform integers in [low, high] per row: low + floor(u * (high - low + 1))
    u = torch.rand(batch_size, 2, generator=g)
    src = (u[:, 0] * (seq_len - 2 * length + 1)).long()
    dst = src + length + (u[:, 1] * (seq_len - length - (src + length) + 1)).long()
    for b in range(batch_size):
        P = int(length[b])
        tokens[b, dst[b]:dst[b] + P] = tokens[b, src[b]:src[b] + P]
    return CopyBatch(tokens, src, dst, length)


def copy_loss(logits: torch.Tensor, batch: CopyBatch) -> torch.Tensor:
    """Mean cross-entropy (nats) over the copy but its first token.

    ``logits`` ``[B, T, V]``: position ``t``'s logits predict ``tokens[:, t + 1]``.
    """
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), batch.tokens[:, 1:],
                                reduction="none")  # [B, T - 1]
    mask = batch.target_mask()
    return per_token[mask].mean()


class AttentionOnly(nn.Module):
    """An attention-only decoder: embeddings, ``num_layers`` pre-LN attention blocks, LN, output.

    ``positions="rope"`` rotates queries and keys inside attention (``rope_base`` 10000);
    ``"learned"`` adds a learned position table to the embeddings. Every linear and
    embedding weight starts from N(0, 0.02), biases at 0.
    ``forward(tokens [B, T], need_weights=False)`` returns ``(logits [B, T, V],
    weights)``, ``weights`` a list with one ``[B, H, T, T]`` tensor per layer (or None).
    """

    def __init__(self, vocab_size: int = 64, d_model: int = 64, num_heads: int = 4,
                 num_layers: int = 2, max_len: int = 64, positions: str = "rope"):
        super().__init__()
        if positions not in ("rope", "learned"):
            raise ValueError(f'positions must be "rope" or "learned"; got {positions!r}')
        self.positions = positions
        self.num_layers, self.num_heads = num_layers, num_heads
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model) if positions == "learned" else None
        rope = 10000.0 if positions == "rope" else None
        self.norms = nn.ModuleList(LayerNorm(d_model) for _ in range(num_layers))
        self.attns = nn.ModuleList(MultiHeadAttention(d_model, num_heads, rope_base=rope)
                                   for _ in range(num_layers))
        self.final_norm = LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

    def forward(self, tokens: torch.Tensor, need_weights: bool = False):
        B, T = tokens.shape
        x = self.embed(tokens)  # [B, T, D]
        if self.pos is not None:
            x = x + self.pos(torch.arange(T, device=tokens.device))
        mask = causal_mask(T, device=tokens.device)
        weights = [] if need_weights else None
        for norm, attn in zip(self.norms, self.attns):
            out, w = attn(norm(x), mask=mask, need_weights=need_weights)
            x = x + out  # the residual stream: each layer adds what its heads read
            if need_weights:
                weights.append(w)
        return self.unembed(self.final_norm(x)), weights


@contextlib.contextmanager
def ablate_heads(model: AttentionOnly, heads):
    """Inside the ``with`` block, the listed heads ``[(layer, head), ...]`` output zero.

    Head ``h`` of a layer is columns ``h * d_k : (h + 1) * d_k`` of the merged heads
    ``[B, L, D]`` (:func:`mha.merge_heads`), the input of ``o_proj``; those columns are set
    to 0 so the head adds nothing to the residual stream (``o_proj``'s bias still does).
    The attention weights the model returns are unchanged: only the head's output goes.
    """
    handles = []
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        if not 0 <= layer < model.num_layers or not 0 <= head < model.num_heads:
            raise ValueError(f"no head ({layer}, {head}): the model has {model.num_layers} "
                             f"layers of {model.num_heads} heads, numbered from 0")
        by_layer.setdefault(layer, []).append(head)
    for layer, hs in by_layer.items():
        attn = model.attns[layer]
        d_k = attn.head_dim

        def zero_heads(module, args, hs=hs, d_k=d_k):
            merged = args[0].clone()  # [B, L, D]; never edit the input in place
            for h in hs:
                merged[..., h * d_k:(h + 1) * d_k] = 0
            return (merged,)

        handles.append(attn.o_proj.register_forward_pre_hook(zero_heads))
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Per head: mean weight on the token just before the query. ``[B, H, T, T] -> [H]``.

    Mean over the batch and queries ``t = 1 .. T - 1`` of ``weights[b, h, t, t - 1]``
    (query 0 has no predecessor).
    """
    _check_weights(weights)
    diagonal = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)  # [B, H, T - 1]
    return diagonal.mean(dim=(0, 2))


def induction_score(weights: torch.Tensor, batch: CopyBatch, offset: int = 1) -> torch.Tensor:
    """Per head: mean weight from the copy to the earlier segment, ``offset`` later. ``-> [H]``.

    ``weights`` ``[B, H, T, T]``. For each sequence and ``i = 0 .. P - 2`` the query is the
    copy's token ``dst + i`` and the key is ``src + i + offset``. ``offset=1`` (the induction
    offset): the token right after the earlier occurrence of the query's token, i.e. the
    next token of the copy. ``offset=0``: the earlier occurrence itself. Keys after the
    query are impossible under the causal mask and raise an error.
    """
    _check_weights(weights)
    B, H, T, _ = weights.shape
    if batch.tokens.shape != (B, T):
        raise ValueError(f"weights are for {B} sequences of length {T}, but the batch's "
                         f"tokens have shape {list(batch.tokens.shape)}")
    per_sequence = []
    for b in range(B):
        i = torch.arange(int(batch.length[b]) - 1)
        queries, keys = batch.dst[b] + i, batch.src[b] + i + offset
        if (keys < 0).any() or (keys > queries).any():
            raise ValueError(f"offset={offset} puts keys before 0 or after their queries")
        per_sequence.append(weights[b, :, queries, keys].mean(dim=-1))  # [H]
    return torch.stack(per_sequence).mean(dim=0)


def _check_weights(weights: torch.Tensor) -> None:
    if weights.dim() != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"attention weights must be [B, H, T, T] (self-attention); got "
                         f"shape {list(weights.shape)}")


@torch.no_grad()
def head_scores(model: AttentionOnly, batch: CopyBatch) -> dict[str, torch.Tensor]:
    """Previous-token and induction scores of every head: each ``[num_layers, H]``."""
    was_training = model.training
    model.eval()
    try:
        _, weights = model(batch.tokens, need_weights=True)
    finally:
        model.train(was_training)
    return {
        "previous_token": torch.stack([previous_token_score(w) for w in weights]),
        "induction": torch.stack([induction_score(w, batch) for w in weights]),
    }


@torch.no_grad()
def evaluate(model: AttentionOnly, batch: CopyBatch, ablate=()) -> float:
    """The copy loss on ``batch``, with the heads in ``ablate`` zeroed."""
    was_training = model.training
    model.eval()
    try:
        with ablate_heads(model, ablate):
            logits, _ = model(batch.tokens)
        return copy_loss(logits, batch).item()
    finally:
        model.train(was_training)


def ablation_table(model: AttentionOnly, batch: CopyBatch) -> torch.Tensor:
    """``[num_layers, H]``: the copy loss's increase (nats) when each head alone is zeroed."""
    base = evaluate(model, batch)
    return torch.tensor([[evaluate(model, batch, [(layer, head)]) - base
                          for head in range(model.num_heads)]
                         for layer in range(model.num_layers)])


@dataclass
class TrainResult:
    """What :func:`train` returns: the model, the copy loss of every step's batch, snapshots."""

    model: AttentionOnly
    losses: list[float]
    snapshots: dict[int, dict] = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def train(num_layers: int = 2, steps: int = 1000, seed: int = 0, positions: str = "rope",
          batch_size: int = 32, lr: float = 1e-3, weight_decay: float = 0.01,
          seq_len: int = 64, vocab_size: int = 64, d_model: int = 64, num_heads: int = 4,
          min_len: int = 16, max_len: int = 32, snapshot_steps=(), cache: bool = True) -> TrainResult:
    """Train an :class:`AttentionOnly` model on fresh copy-task batches with AdamW.

    The loss trained on is the full next-token loss (every position; the random tokens
    teach the model the unigram distribution, the copy is where the context helps);
    ``losses[s]`` records the copy loss (:func:`copy_loss`) of step ``s``'s batch before the
    update. ``snapshot_steps``: copies of the weights taken before the update of those
    steps. The model's initial weights and every batch depend only on ``seed``.

    ``cache``: the run is computed once per machine and kept on disk
    (:func:`mha.course.run_cache.cached`, keyed by every argument and the code); a later call
    loads it, with the run's own ``seconds`` and ``cpu_seconds``, and leaves the random number
    generator as the run did.
    """
    settings = dict(num_layers=num_layers, steps=steps, seed=seed, positions=positions,
                    batch_size=batch_size, lr=lr, weight_decay=weight_decay, seq_len=seq_len,
                    vocab_size=vocab_size, d_model=d_model, num_heads=num_heads,
                    min_len=min_len, max_len=max_len, snapshot_steps=sorted(snapshot_steps))
    trained = {}

    def run() -> dict:
        trained["model"], record = _train(**settings)
        return record

    if cache:
        key = {"settings": settings, "code": run_cache.code_digest(__file__)}
        record = run_cache.cached("induction", key, run)
    else:
        record = run()
    model = trained.get("model")
    if model is None:  # loaded: the same model, built without drawing from the generator
        with torch.random.fork_rng(devices=[]):
            model = AttentionOnly(vocab_size, d_model, num_heads, num_layers, seq_len, positions)
        model.load_state_dict(record["state"])
        torch.set_rng_state(record["rng_state"])
    return TrainResult(model.eval(), record["losses"], record["snapshots"],
                       record["seconds"], record["cpu_seconds"])


def _train(num_layers, steps, seed, positions, batch_size, lr, weight_decay, seq_len,
           vocab_size, d_model, num_heads, min_len, max_len, snapshot_steps):
    """The training run of :func:`train`: the model and a record the cache can keep."""
    torch.manual_seed(seed)
    model = AttentionOnly(vocab_size, d_model, num_heads, num_layers, seq_len, positions)
    data = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    losses, snapshots = [], {}
    start, cpu_start = time.perf_counter(), time.process_time()
    for step in range(steps):
        if step in snapshot_steps:
            snapshots[step] = {k: v.clone() for k, v in model.state_dict().items()}
        batch = copy_batch(batch_size, seq_len, vocab_size, min_len, max_len, data)
        logits, _ = model(batch.tokens)
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch.tokens[:, 1:].flatten())
        losses.append(copy_loss(logits.detach(), batch).item())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    record = dict(losses=losses, snapshots=snapshots, seconds=time.perf_counter() - start,
                  cpu_seconds=time.process_time() - cpu_start)
    return model, {**record, "state": model.state_dict(), "rng_state": torch.get_rng_state()}


# Exercise 16's model: a seed and a length of training that chapter 15 does not use. Its
# weights ship with the package: the learner's notebook and the grader's sandbox load them in
# a moment, where training them costs about 20 s of CPU in each, enough on a loaded grading
# machine to pass a cell's time limit. tests/test_induction.py trains them again and compares.
EXERCISE_SEED = 4
EXERCISE_STEPS = 500
EXERCISE_WEIGHTS = Path(__file__).with_name("ex16_model.pt")


def train_exercise_weights() -> dict[str, torch.Tensor]:
    """Exercise 16's weights trained from scratch, as ``python -m mha.course.induction``
    writes them to ``EXERCISE_WEIGHTS``. The caller's random state and threads are kept."""
    threads = torch.get_num_threads()
    # One thread: the sums in a fixed order, so that the run is the same on every call.
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            result = train(num_layers=2, steps=EXERCISE_STEPS, seed=EXERCISE_SEED, cache=False)
    finally:
        torch.set_num_threads(threads)
    return result.model.state_dict()


@functools.lru_cache(maxsize=1)
def _exercise_weights() -> dict[str, torch.Tensor]:
    return torch.load(EXERCISE_WEIGHTS, weights_only=True)


def exercise_model() -> AttentionOnly:
    """Exercise 16's model: a 2-layer :class:`AttentionOnly` trained by :func:`train` with the
    chapter's settings and ``EXERCISE_SEED`` for ``EXERCISE_STEPS`` steps, in eval mode.

    The weights are read from the package once per process; every call returns a new model
    with a copy of them, so a learner who changes one changes no other. Nothing here draws
    from the caller's random number generator.
    """
    weights = _exercise_weights()
    with torch.random.fork_rng(devices=[]):  # initial weights, replaced below: no draw from the caller's
        model = AttentionOnly(num_layers=2)
    model.load_state_dict(weights)  # copies: the cached weights stay as trained
    return model.eval()


if __name__ == "__main__":  # the maintainer's command that writes the shipped weights
    torch.save(train_exercise_weights(), EXERCISE_WEIGHTS)
