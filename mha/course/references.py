"""Trusted references with given weights, for the chapters and the exercises' checks.

Chapters compare our code with PyTorch's, and the exercise checks compare a learner's
function with ours. Both need the reference to take *the same weights* as the code under
test; these helpers copy the weights in once, here, instead of in every chapter and test.

* ``torch_twin(m)``: an ``nn.MultiheadAttention`` with the weights of our
  ``mha.MultiHeadAttention`` ``m`` (chapters 2 to 5 and 9, bench/run.py).
* ``rms_norm(x, weight)`` and ``swiglu(x, W_gate, W_up, W_down)``: ``mha.RMSNorm`` and
  ``mha.SwiGLU`` as functions of their weights, the form exercise 14 asks for.
* ``table_model(tables)``, ``beam_step``, ``list_beam_search`` and ``exhaustive_search``: exercise
  12's toy model and the searches its checks compare a learner's beam search with.

A learner could import these to pass the question they answer; that question's check refuses
them with ``forbid`` (e.g. exercise 14's ``swiglu`` refuses ``references.swiglu``).
"""
from __future__ import annotations

import itertools
from typing import Callable

import torch
import torch.nn as nn

from mha.mlp import SwiGLU
from mha.multihead import MultiHeadAttention
from mha.norms import RMSNorm


@torch.no_grad()
def torch_twin(m: MultiHeadAttention) -> nn.MultiheadAttention:
    """An ``nn.MultiheadAttention`` (``batch_first=True``, in eval mode) with ``m``'s weights.

    PyTorch packs the three input projections into one matrix: ``in_proj_weight`` ``[3D, D]``
    is ``W^Q``, ``W^K``, ``W^V`` stacked in that order (``in_proj_bias`` likewise), and
    ``out_proj`` is ``W^O``. The twin is a copy: changing ``m`` later does not change it.
    Remember that its masks mean the opposite of ours (``True`` = blocked).
    """
    if m.num_kv_heads != m.num_heads or m.rope_base is not None:
        raise ValueError(
            f"nn.MultiheadAttention has neither grouped key/value heads nor RoPE; got "
            f"num_kv_heads={m.num_kv_heads} (num_heads={m.num_heads}), rope_base={m.rope_base}")
    bias = m.q_proj.bias is not None
    twin = nn.MultiheadAttention(m.d_model, m.num_heads, dropout=m.dropout, bias=bias,
                                 batch_first=True, dtype=m.q_proj.weight.dtype)
    projections = (m.q_proj, m.k_proj, m.v_proj)
    twin.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))  # [3D, D]
    twin.out_proj.weight.copy_(m.o_proj.weight)
    if bias:
        twin.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))  # [3D]
        twin.out_proj.bias.copy_(m.o_proj.bias)
    return twin.eval()


@torch.no_grad()
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``mha.RMSNorm`` with the given ``weight`` ``[D]``: ``x`` ``[..., D]`` -> ``[..., D]``."""
    norm = RMSNorm(x.shape[-1], eps)
    norm.weight.copy_(weight)
    return norm(x)


@torch.no_grad()
def swiglu(x: torch.Tensor, W_gate: torch.Tensor, W_up: torch.Tensor,
           W_down: torch.Tensor) -> torch.Tensor:
    """``mha.SwiGLU`` with the given weights: ``x`` ``[..., D]`` -> ``[..., D]``.

    ``W_gate`` and ``W_up`` are ``[D, D_ff]`` and ``W_down`` is ``[D_ff, D]``, the way they
    multiply ``x`` (``x @ W``); ``nn.Linear`` stores the transposes.
    """
    layer = SwiGLU(W_gate.shape[0], W_gate.shape[1])
    layer.gate_proj.weight.copy_(W_gate.T)
    layer.up_proj.weight.copy_(W_up.T)
    layer.down_proj.weight.copy_(W_down.T)
    return layer(x)


# --------------------------------------------------------------------- beam search (exercise 12)
# A "model" here is a function ``next_log_probs(prefixes [N, t]) -> log-probabilities [N, V]``.

def table_model(tables: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """A toy model from ``tables`` ``[T, V, V]``: after a prefix of ``t`` tokens ending in
    token ``a`` (``a = 0`` for the empty prefix) the next token's log-probabilities are
    ``tables[t, a]``."""
    def next_log_probs(prefixes: torch.Tensor) -> torch.Tensor:
        N, t = prefixes.shape
        last = prefixes[:, -1] if t else torch.zeros(N, dtype=torch.long)  # [N]
        return tables[t][last]                                              # [N, V]
    return next_log_probs


def beam_step(sums: torch.Tensor, log_probs: torch.Tensor, beam_size: int):
    """The ``beam_size`` best of the ``K * V`` extensions, best first (exercise 12, q1).

    ``sums`` ``[B, K]`` (``-inf`` for an unused slot), ``log_probs`` ``[B, K, V]``; returns
    ``(new_sums, parents, tokens)``, each ``[B, beam_size]``.
    """
    B, K, V = log_probs.shape
    totals = (sums[:, :, None] + log_probs).reshape(B, K * V)  # [B, K*V], index = k * V + token
    new_sums, index = totals.topk(beam_size, dim=-1)
    return new_sums, index // V, index % V


def list_beam_search(next_log_probs, length: int, beam_size: int) -> tuple[float, list[int]]:
    """Beam search with Python lists, one hypothesis at a time: ``(total, tokens)`` of the best
    sequence of ``length`` tokens kept by a beam of ``beam_size`` (no end token)."""
    beam = [(0.0, [])]                                       # (total log-probability, tokens)
    for _ in range(length):
        candidates = []
        for total, tokens in beam:
            log_probs = next_log_probs(torch.tensor(tokens, dtype=torch.long).reshape(1, -1))[0]
            candidates += [(total + float(lp), tokens + [v]) for v, lp in enumerate(log_probs)]
        beam = sorted(candidates, key=lambda c: c[0], reverse=True)[:beam_size]
    return beam[0]


def exhaustive_search(next_log_probs, length: int, V: int) -> tuple[float, list[int]]:
    """``(total, tokens)`` of the most probable of all ``V ** length`` sequences, each scored
    token by token."""
    best = (float("-inf"), None)
    for tokens in itertools.product(range(V), repeat=length):
        total = 0.0
        for t in range(length):
            prefix = torch.tensor(tokens[:t], dtype=torch.long).reshape(1, t)
            total += float(next_log_probs(prefix)[0, tokens[t]])
        best = max(best, (total, list(tokens)))
    return best
