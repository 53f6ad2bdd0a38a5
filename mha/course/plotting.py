"""Pictures used throughout the chapters: attention heatmaps and masks.

The labels these functions write are English, or Chinese after ``use_language("zh")`` (the
Chinese edition's notebooks call it; the environment variable MHA_COURSE_LANG=zh does the same
at import). Chinese needs a font with Han characters: ``use_language("zh")`` puts the first CJK
font it finds (WenQuanYi Micro Hei, from Debian's fonts-wqy-microhei, or a Noto/Source Han
font) in front of matplotlib's sans-serif list, so no character is drawn as an empty box.
"""
from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch


# The words the plotting functions write, per language.
LABELS = {
    "en": {"key_attended": "key (attended to)", "query_attending": "query (attending)",
           "key": "key", "query": "query", "head": "head {h}"},
    "zh": {"key_attended": "键（被关注）", "query_attending": "查询（发起关注）",
           "key": "键", "query": "查询", "head": "头 {h}"},
}
# CJK fonts matplotlib may find, best first, and where Debian puts the first one.
CJK_FONTS = ["WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
             "Source Han Sans CN", "SimHei", "Microsoft YaHei", "PingFang SC"]
CJK_FONT_FILES = ["/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
                  "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"]

_language = "en"
# What use_language("zh") changes, as matplotlib had it: use_language("en") puts it back.
_ENGLISH_FONT_SETTINGS = {key: matplotlib.rcParams[key]
                          for key in ("font.sans-serif", "font.family", "axes.unicode_minus")}


class _OneWeightFont(logging.Filter):
    """Drops matplotlib's warning that a font has no bold weight. WenQuanYi Micro Hei (the CJK
    font of Debian and Colab) has one weight, so a bold title in Chinese is drawn at the regular
    weight, and matplotlib would print that warning under the figure."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("findfont: Failed to find font weight")


_ONE_WEIGHT_FONT = _OneWeightFont()


def cjk_font() -> str | None:
    """The name of a CJK font matplotlib can use, or None (registering a known font file
    that matplotlib's font cache, made before the font was installed, does not list)."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONTS:
        if name in names:
            return name
    for path in CJK_FONT_FILES:
        if Path(path).is_file():
            font_manager.fontManager.addfont(path)
            return font_manager.FontProperties(fname=path).get_name()
    return None


def use_language(language: str) -> None:
    """Write the figures' labels (and the titles the chapters pass) in ``"en"`` or ``"zh"``.

    For Chinese, a CJK font goes in front of matplotlib's sans-serif fonts; the others stay
    behind it as the fallback for glyphs it lacks (matplotlib >= 3.6 falls back per glyph).
    """
    global _language
    if language not in LABELS:
        raise ValueError(f"use_language: unknown language {language!r}; choose one of {sorted(LABELS)}")
    _language = language
    for key, value in _ENGLISH_FONT_SETTINGS.items():  # back to matplotlib's settings first
        matplotlib.rcParams[key] = value
    logging.getLogger("matplotlib.font_manager").removeFilter(_ONE_WEIGHT_FONT)
    if language == "zh":
        font = cjk_font()
        if font is None:
            warnings.warn("No Chinese font found, so Chinese labels will show as empty boxes. On Debian/Ubuntu "
                          "(or Colab): apt-get install fonts-wqy-microhei, then restart the kernel.", stacklevel=2)
            return
        rest = [f for f in matplotlib.rcParams["font.sans-serif"] if f != font]
        matplotlib.rcParams["font.sans-serif"] = [font, *rest]
        # Named first, the CJK font is also used for italic text: through the generic family alone,
        # matplotlib would pick one italic font (DejaVu Sans Oblique, no Han glyphs) and draw boxes.
        matplotlib.rcParams["font.family"] = [font, "sans-serif"]
        # The CJK font's minus sign is a hyphen-like glyph; keep ASCII '-' for tick labels.
        matplotlib.rcParams["axes.unicode_minus"] = False
        logging.getLogger("matplotlib.font_manager").addFilter(_ONE_WEIGHT_FONT)


def language() -> str:
    return _language


def label(name: str, **fields) -> str:
    """One of the plotting functions' words in the current language: label("head", h=2)."""
    return LABELS[_language][name].format(**fields)


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
    ax.set_xlabel(label("key_attended"))
    ax.set_ylabel(label("query_attending"))
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
        ax.set_title(label("head", h=h))
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
    ax.set_xlabel(label("key"))
    ax.set_ylabel(label("query"))
    for i, j in np.ndindex(m.shape):
        ax.text(j, i, "✓" if m[i, j] else "·", ha="center", va="center", fontsize=8,
                color="white" if m[i, j] else "grey")
    if title:
        ax.set_title(title)
    return ax


if os.environ.get("MHA_COURSE_LANG"):
    use_language(os.environ["MHA_COURSE_LANG"])
