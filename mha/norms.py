"""LayerNorm, BatchNorm and RMSNorm written from their formulas.

Both compute ``(x - mean) / sqrt(var + eps) * weight + bias`` with the *biased* variance;
they differ only in which axis the statistics are taken over:

* LayerNorm: over the features of each token separately (the last axis of ``[..., d]``).
  A token's output depends on that token alone.
* BatchNorm: per feature, over every token in the batch (all leading axes of ``[..., d]``).
  A token's output depends on the rest of the batch, and eval mode uses running averages.

RMSNorm (Llama's choice) is LayerNorm of each token without the mean subtraction and without
the bias: ``x / sqrt(mean(x^2) + eps) * weight``.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import check_features


class LayerNorm(nn.Module):
    """Normalise each vector over its last axis: ``[..., d] -> [..., d]``."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.d, self.eps = d, eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_features(x, self.d, "LayerNorm")
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"d={self.d}, eps={self.eps}"


class BatchNorm(nn.Module):
    """Normalise each feature over all leading axes: ``[..., d] -> [..., d]``.

    Matches ``nn.BatchNorm1d(d)`` applied to ``x.reshape(-1, d)``: training mode uses the
    batch's statistics and updates ``running_mean``/``running_var`` (the latter with the
    unbiased variance) by ``running = (1 - momentum) * running + momentum * batch``; eval
    mode uses the running statistics.
    """

    def __init__(self, d: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.d, self.eps, self.momentum = d, eps, momentum
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.register_buffer("running_mean", torch.zeros(d))
        self.register_buffer("running_var", torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_features(x, self.d, "BatchNorm")
        flat = x.reshape(-1, self.d)  # [N, d]: every token of every sequence is a sample
        if self.training:
            n = flat.shape[0]
            if n < 2:
                raise ValueError(
                    f"BatchNorm in training mode needs more than 1 value per feature to "
                    f"estimate a variance; got an input of shape {list(x.shape)} (N={n})"
                )
            mean = flat.mean(dim=0)
            var = flat.var(dim=0, unbiased=False)
            with torch.no_grad():
                self.running_mean.lerp_(mean, self.momentum)
                self.running_var.lerp_(var * n / (n - 1), self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"d={self.d}, eps={self.eps}, momentum={self.momentum}"


class RMSNorm(nn.Module):
    """Root-mean-square norm (Zhang & Sennrich, 2019), as in Llama: ``[..., d] -> [..., d]``.

    ``x / sqrt(mean(x^2) + eps) * weight``: LayerNorm without the mean subtraction and
    without the bias. Computed in float32 and cast back, like transformers'
    ``LlamaRMSNorm``; equals ``torch.nn.RMSNorm(d, eps)``.
    """

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.d, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_features(x, self.d, "RMSNorm")
        x32 = x.float()  # half-precision squares overflow and lose digits
        rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (x32 * rms).to(x.dtype) * self.weight

    def extra_repr(self) -> str:
        return f"d={self.d}, eps={self.eps}"
