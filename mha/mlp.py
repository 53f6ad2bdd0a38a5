"""The two position-wise MLPs of decoder-only language models.

* ``MLP``: GPT-2's ``proj(gelu(fc(x)))`` with the tanh approximation of GELU
  (GPT-2's ``gelu_new``), usually ``d_ff = 4 * d_model``.
* ``SwiGLU``: Llama's gated MLP ``down_proj(silu(gate_proj(x)) * up_proj(x))``, no biases.
  It has three matrices instead of two, so ``d_ff ~ 2/3 * 4 * d_model`` keeps the
  parameter count of a GELU MLP with ``4 * d_model``.

Shapes: ``[..., d_model] -> [..., d_model]``.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """GPT-2's MLP: ``proj(gelu_tanh(fc(x)))``, submodules ``fc`` and ``proj``."""

    def __init__(self, d_model: int, d_ff: int, bias: bool = True):
        super().__init__()
        self.fc = nn.Linear(d_model, d_ff, bias=bias)
        self.proj = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # tanh approximation: what GPT-2 was trained with, so converted weights match
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))  # [..., d_ff] -> [..., D]


class SwiGLU(nn.Module):
    """Llama's gated MLP: ``down_proj(silu(gate_proj(x)) * up_proj(x))``, no biases."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the gate decides, feature by feature, how much of up_proj(x) passes
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))  # [..., D]
