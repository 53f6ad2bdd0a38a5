"""Pictures used throughout the chapters: attention heatmaps and masks."""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch


def _as_numpy(x) -> np.ndarray:
    return x.detach().cpu().float().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def plot_attention(weights, queries: Sequence[str] | None = None,
                   keys: Sequence[str] | None = None, ax=None, title: str | None = None,
                   annotate: bool | None = None, cmap: str = "viridis"):
    """Heatmap of one ``[L, S]`` weight matrix: row = query, column = key.

    Cell values are written in when the matrix is small enough to read (``annotate``).
    Returns the Axes.
    """
    w = _as_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"plot_attention expects an [L, S] matrix; got shape {list(w.shape)}")
    ax = ax or plt.subplots(figsize=(0.5 * w.shape[1] + 2, 0.5 * w.shape[0] + 1.5))[1]
    image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=max(1e-9, float(w.max())))
    ax.set_xticks(range(w.shape[1]), keys if keys is not None else range(w.shape[1]),
                  rotation=90 if keys is not None and max(map(len, keys), default=0) > 2 else 0)
    ax.set_yticks(range(w.shape[0]), queries if queries is not None else range(w.shape[0]))
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    if title:
        ax.set_title(title)
    if annotate if annotate is not None else max(w.shape) <= 8:
        for i, j in np.ndindex(w.shape):
            ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if w[i, j] < 0.6 * w.max() else "black")
    plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def plot_heads(weights, queries: Sequence[str] | None = None,
               keys: Sequence[str] | None = None, title: str | None = None, ncols: int = 4):
    """One heatmap per head, side by side, for ``[H, L, S]`` weights. Returns the Figure."""
    w = _as_numpy(weights)
    if w.ndim != 3:
        raise ValueError(f"plot_heads expects [H, L, S] weights; got shape {list(w.shape)}")
    H = w.shape[0]
    ncols = min(ncols, H)
    nrows = -(-H // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), squeeze=False)
    for h, ax in enumerate(axes.flat):
        if h >= H:
            ax.axis("off")
            continue
        ax.imshow(w[h], cmap="viridis", vmin=0.0, vmax=1.0)
        ax.set_title(f"head {h}")
        ax.set_xticks(range(w.shape[2]), keys if keys is not None else range(w.shape[2]),
                      rotation=90, fontsize=7)
        ax.set_yticks(range(w.shape[1]), queries if queries is not None else range(w.shape[1]),
                      fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_mask(mask, queries: Sequence[str] | None = None,
              keys: Sequence[str] | None = None, ax=None, title: str | None = None):
    """Picture of a boolean ``[L, S]`` mask: dark = may attend (True), light = blocked."""
    m = _as_numpy(mask).astype(bool)
    if m.ndim != 2:
        raise ValueError(f"plot_mask expects an [L, S] mask; got shape {list(m.shape)}")
    ax = ax or plt.subplots(figsize=(0.4 * m.shape[1] + 1.5, 0.4 * m.shape[0] + 1.2))[1]
    ax.imshow(m, cmap="Blues", vmin=-0.3, vmax=1.0)
    ax.set_xticks(range(m.shape[1]), keys if keys is not None else range(m.shape[1]),
                  rotation=90 if keys is not None else 0)
    ax.set_yticks(range(m.shape[0]), queries if queries is not None else range(m.shape[0]))
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    for i, j in np.ndindex(m.shape):
        ax.text(j, i, "✓" if m[i, j] else "·", ha="center", va="center", fontsize=8,
                color="white" if m[i, j] else "grey")
    if title:
        ax.set_title(title)
    return ax
