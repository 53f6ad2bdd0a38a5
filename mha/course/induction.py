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

* :func:`lag_score` generalises the previous-token score to any distance back
  (``lag=1`` is the previous token) and :func:`offset_scan` the induction score to any
  offset: a circuit built *shifted* (a layer-0 head looking 7 tokens back, layer-1 heads
  attending 7 tokens after the earlier occurrence) scores near 0 at the textbook distances
  and shows up in the scans.

Ablation (:func:`ablate_heads`): a head is removed by zeroing its output, the head's
``d_k`` slice of the merged heads, just before the output projection ``o_proj``.
:func:`path_ablated_loss` removes earlier heads' outputs from *one* input (query, key or
value) of a later layer only; :func:`direct_logit_accuracy` asks whether a head's own output,
read straight through the final LayerNorm and the output layer, names the next token.

Exercise 16 gives the learner a model trained here with a seed chapter 15 does not show
(:func:`exercise_model`), so that its heads must be found by measurement.
"""
from __future__ import annotations

import contextlib
import copy
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
    embedding weight starts from N(0, 0.02²) (standard deviation 0.02), biases at 0; the
    LayerNorm gains start at 1 and their biases at 0.
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
    (query 0 has no predecessor). The same as ``lag_score(weights, 1)``.
    """
    return lag_score(weights, 1)


def lag_score(weights: torch.Tensor, lag: int) -> torch.Tensor:
    """Per head: mean weight on the token ``lag`` positions before the query. ``-> [H]``.

    ``weights`` ``[B, H, T, T]``; mean over the batch and queries ``t = lag .. T - 1`` of
    ``weights[b, h, t, t - lag]`` (earlier queries have no such key).
    """
    _check_weights(weights)
    T = weights.shape[-1]
    if not 1 <= lag < T:
        raise ValueError(f"lag must be between 1 and T - 1 = {T - 1}; got {lag}")
    diagonal = torch.diagonal(weights, offset=-lag, dim1=-2, dim2=-1)  # [B, H, T - lag]
    return diagonal.mean(dim=(0, 2))


def lag_scan(weights: torch.Tensor, lags) -> torch.Tensor:
    """:func:`lag_score` at each of ``lags``: ``[B, H, T, T] -> [len(lags), H]``."""
    return torch.stack([lag_score(weights, lag) for lag in lags])


def offset_scan(weights: torch.Tensor, batch: "CopyBatch", offsets) -> torch.Tensor:
    """:func:`induction_score` at each of ``offsets``: ``[B, H, T, T] -> [len(offsets), H]``.

    Offset ``k``: the weight from the copy's token ``dst + i`` to ``src + i + k``. Offsets
    ``0 .. min_len`` are always possible (the copy starts at least ``P`` after the segment).
    """
    return torch.stack([induction_score(weights, batch, offset=k) for k in offsets])


def uniform_causal_weights(batch_size: int, seq_len: int) -> torch.Tensor:
    """``[B, 1, T, T]``: each query ``t`` spreads its weight evenly over keys ``0 .. t``.

    A head that looked nowhere in particular; its scores are the baselines of the scores.
    """
    allowed = causal_mask(seq_len).float()  # [T, T]
    rows = allowed / allowed.sum(dim=-1, keepdim=True)
    return rows.expand(batch_size, 1, seq_len, seq_len)


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
    # all sequences at once: i = 0 .. max P - 2, with the i past a sequence's own P - 2 masked
    i = torch.arange(int(batch.length.max()) - 1)  # [I]
    used = i[None, :] < (batch.length - 1)[:, None]  # [B, I]
    queries = batch.dst[:, None] + i  # [B, I]
    keys = batch.src[:, None] + i + offset
    if (keys[used] < 0).any() or (keys[used] > queries[used]).any():
        raise ValueError(f"offset={offset} puts keys before 0 or after their queries")
    queries, keys = queries.clamp(max=T - 1), keys.clamp(0, T - 1)  # masked ones: any valid index
    picked = weights[torch.arange(B)[:, None], :, queries, keys]  # [B, I, H]
    per_sequence = (picked * used[..., None]).sum(dim=1) / used.sum(dim=1, keepdim=True)  # [B, H]
    return per_sequence.mean(dim=0)


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


@torch.no_grad()
def run_with_head_outputs(model: AttentionOnly, tokens: torch.Tensor, remove=(),
                          path: str | None = None, reader: int = 1):
    """The model's forward pass, keeping what each head adds to the residual stream.

    Returns ``(logits [B, T, V], outputs)``: ``outputs[layer]`` is ``[B, T, H, D]``, head
    ``h``'s contribution ``merged_h @ W_o[:, h]ᵀ`` (the layer adds their sum plus ``o_proj``'s
    bias). ``remove`` ``[(layer, head), ...]`` (heads of layers before ``reader``) and ``path``
    (``"query"``, ``"key"`` or ``"value"``): those heads' contributions are taken out of that
    one input of layer ``reader`` only; the rest of the model sees them as usual.
    """
    if path not in (None, "query", "key", "value"):
        raise ValueError(f'path must be "query", "key" or "value"; got {path!r}')
    for layer, head in remove:
        if not 0 <= layer < reader or not 0 <= head < model.num_heads:
            raise ValueError(f"head ({layer}, {head}) cannot be removed from layer {reader}'s "
                             f"input: it must be a head of an earlier layer (0..{reader - 1}), "
                             f"numbered 0..{model.num_heads - 1}")
    B, T = tokens.shape
    x = model.embed(tokens)  # [B, T, D]
    if model.pos is not None:
        x = x + model.pos(torch.arange(T, device=tokens.device))
    mask = causal_mask(T, device=tokens.device)
    outputs = []
    for layer, (norm, attn) in enumerate(zip(model.norms, model.attns)):
        inputs = {"query": x, "key": x, "value": x}
        if layer == reader and remove:
            removed = sum(outputs[l][:, :, h] for l, h in remove)  # [B, T, D]
            inputs[path] = x - removed
        merged = []
        hook = attn.o_proj.register_forward_pre_hook(lambda m, args: merged.append(args[0]))
        try:
            out, _ = attn(norm(inputs["query"]), norm(inputs["key"]), norm(inputs["value"]),
                          mask=mask)
        finally:
            hook.remove()
        d_k = attn.head_dim
        per_head = merged[0].unflatten(-1, (model.num_heads, d_k))  # [B, T, H, d_k]
        w_o = attn.o_proj.weight.unflatten(-1, (model.num_heads, d_k))  # [D, H, d_k]
        outputs.append(torch.einsum("bthk,dhk->bthd", per_head, w_o))  # [B, T, H, D]
        x = x + out
    return model.unembed(model.final_norm(x)), outputs


def path_ablated_loss(model: AttentionOnly, batch: CopyBatch, heads, path: str,
                      reader: int = 1) -> float:
    """The copy loss when ``heads`` are removed from one input (``path``) of layer ``reader``.

    K-composition (a later head's *key* reads an earlier head's output) shows as a loss that
    rises when ``path="key"``; V-composition when ``path="value"``.
    """
    was_training = model.training
    model.eval()
    try:
        logits, _ = run_with_head_outputs(model, batch.tokens, heads, path, reader)
    finally:
        model.train(was_training)
    return copy_loss(logits, batch).item()


@torch.no_grad()
def direct_logit_accuracy(model: AttentionOnly, batch: CopyBatch) -> torch.Tensor:
    """``[num_layers, H]``: how often a head's own output ranks the right next token first.

    At each prediction the copy loss scores, the head's contribution ``c`` ``[D]`` is read
    straight into logits through the final LayerNorm with its scale frozen (centred, times
    the gain, then the output layer: ``W_U (γ ⊙ (c - mean c))``; the frozen division by the
    standard deviation is positive and does not change the ranking). A head that copies the
    token it attends to scores high; chance is ``1 / V``.
    """
    was_training = model.training
    model.eval()
    try:
        _, outputs = run_with_head_outputs(model, batch.tokens)
    finally:
        model.train(was_training)
    mask = batch.target_mask()  # [B, T - 1]
    targets = batch.tokens[:, 1:][mask]  # [N]
    gain = model.final_norm.weight
    table = []
    for per_head in outputs:  # [B, T, H, D]
        c = per_head[:, :-1][mask]  # [N, H, D]
        logits = model.unembed((c - c.mean(dim=-1, keepdim=True)) * gain)  # [N, H, V]
        table.append((logits.argmax(dim=-1) == targets[:, None]).float().mean(dim=0))
    return torch.stack(table)


@torch.no_grad()
def copy_loss_by_position(model: AttentionOnly, batch: CopyBatch) -> torch.Tensor:
    """``[min P]``: mean loss (nats) of the copy's token ``i``, for ``i = 0 .. min P - 1``.

    Token ``dst + i`` is predicted at position ``dst + i - 1``. Position 0, the copy's first
    token, cannot be predicted (the copy loss leaves it out); every sequence has the
    positions up to the shortest segment's length.
    """
    was_training = model.training
    model.eval()
    try:
        logits, _ = model(batch.tokens)
    finally:
        model.train(was_training)
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), batch.tokens[:, 1:],
                                reduction="none")  # [B, T - 1]: column t predicts t + 1
    i = torch.arange(int(batch.length.min()))
    rows = torch.arange(len(batch.dst))[:, None]
    return per_token[rows, batch.dst[:, None] + i - 1].mean(dim=0)


@torch.no_grad()
def scores_over_training(result: "TrainResult", batch: CopyBatch, lags=(1,),
                         offsets=(1,)) -> dict[str, torch.Tensor]:
    """Scores of every head at each snapshot of a run (and at its end).

    Returns ``steps`` ``[S]``; ``lag`` ``[S, len(lags), num_layers, H]`` (:func:`lag_score`)
    and ``offset`` ``[S, len(offsets), num_layers, H]`` (:func:`offset_scan`).
    """
    model = copy.deepcopy(result.model).eval()
    steps = sorted(result.snapshots) + [len(result.losses)]
    lag, offset = [], []
    for step in steps:
        state = result.snapshots.get(step, result.model.state_dict())
        model.load_state_dict(state)
        _, weights = model(batch.tokens, need_weights=True)
        lag.append(torch.stack([lag_scan(w, lags) for w in weights], dim=1))
        offset.append(torch.stack([offset_scan(w, batch, offsets) for w in weights], dim=1))
    return {"steps": torch.tensor(steps), "lag": torch.stack(lag), "offset": torch.stack(offset)}


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


# Exercise 16's models: seeds and lengths of training that chapter 15 does not use. Their
# weights ship with the package: the learner's notebook and the grader's sandbox load them in
# a moment, where training them costs 20-50 s of CPU in each, enough on a loaded grading
# machine to pass a cell's time limit. tests/test_induction.py checks them against the recipe.
# "induction" (the default): a textbook circuit, questions 1-4. "shifted" (question 5): a
# circuit at another distance, which the scores at distance 1 miss (chapter 15's seed 3 kind).
EXERCISE_SEED = 4
EXERCISE_STEPS = 500
EXERCISE_WEIGHTS = Path(__file__).with_name("ex16_model.pt")
EXERCISE_MODELS = {  # name: (seed, steps, file)
    "induction": (EXERCISE_SEED, EXERCISE_STEPS, EXERCISE_WEIGHTS),
    "shifted": (15, 800, Path(__file__).with_name("ex16_model_shifted.pt")),
}


def train_exercise_weights(name: str = "induction") -> dict[str, torch.Tensor]:
    """Exercise 16's weights trained from scratch, as ``python -m mha.course.induction``
    writes them to their file (``EXERCISE_MODELS[name]``). The caller's random state and
    threads are kept."""
    seed, steps, _ = EXERCISE_MODELS[name]
    threads = torch.get_num_threads()
    # One thread: the sums in a fixed order, so that the run is the same on every call.
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            result = train(num_layers=2, steps=steps, seed=seed, cache=False)
    finally:
        torch.set_num_threads(threads)
    return result.model.state_dict()


@functools.lru_cache(maxsize=None)
def _exercise_weights(name: str = "induction") -> dict[str, torch.Tensor]:
    return torch.load(EXERCISE_MODELS[name][2], weights_only=True)


def exercise_model(name: str = "induction") -> AttentionOnly:
    """One of exercise 16's models (``EXERCISE_MODELS``): a 2-layer :class:`AttentionOnly`
    trained by :func:`train` with the chapter's settings, its seed and its number of steps, in
    eval mode. ``"induction"`` (``EXERCISE_SEED``, ``EXERCISE_STEPS``) has a textbook circuit;
    ``"shifted"`` has one at another distance.

    The weights are read from the package once per process; every call returns a new model
    with a copy of them, so a learner who changes one changes no other. Nothing here draws
    from the caller's random number generator.
    """
    if name not in EXERCISE_MODELS:
        raise ValueError(f"no exercise model {name!r}: the models are {sorted(EXERCISE_MODELS)}")
    weights = _exercise_weights(name)
    with torch.random.fork_rng(devices=[]):  # initial weights, replaced below: no draw from the caller's
        model = AttentionOnly(num_layers=2)
    model.load_state_dict(weights)  # copies: the cached weights stay as trained
    return model.eval()


@dataclass(frozen=True)
class Measurement:
    """An exercise model measured on one batch of the copy task (:func:`measure_exercise_model`)."""

    scores: dict[str, torch.Tensor]  # head_scores: "previous_token", "induction", each [num_layers, H]
    ablation: torch.Tensor           # ablation_table: [num_layers, H]
    loss: float                      # evaluate: the copy loss with every head in place


def measure_exercise_model(batch_size: int, seed: int, name: str = "induction") -> Measurement:
    """Exercise model ``name`` (:func:`exercise_model`) measured on ``copy_batch(batch_size)``
    drawn with a generator seeded ``seed``: its head scores, ablation table and copy loss, the
    numbers exercise 16's checks compare a learner's answers with.

    Measured once per process: a grader checks a whole class against the same numbers, and the
    ablation table alone is ``1 + num_layers * H`` forward passes. Every call returns copies,
    so nothing a caller does to one result changes the next.
    """
    scores, ablation, loss = _measure_exercise_model(name, batch_size, seed)
    return Measurement({key: value.clone() for key, value in scores.items()}, ablation.clone(), loss)


@functools.lru_cache(maxsize=None)
def _measure_exercise_model(name: str, batch_size: int, seed: int):
    model = exercise_model(name)
    batch = copy_batch(batch_size, generator=torch.Generator().manual_seed(seed))
    return head_scores(model, batch), ablation_table(model, batch), evaluate(model, batch)


if __name__ == "__main__":  # the maintainer's command that writes the shipped weights
    import sys
    for name in sys.argv[1:] or EXERCISE_MODELS:  # python -m mha.course.induction [name ...]
        torch.save(train_exercise_weights(name), EXERCISE_MODELS[name][2])
