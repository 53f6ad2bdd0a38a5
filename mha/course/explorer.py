"""An interactive attention viewer that works offline: Jupyter, Colab and the built book.

``show_attention(weights, tokens)`` returns an object that Jupyter displays as HTML:

* **all heads**: a thumbnail of every head's whole ``T x T`` pattern (query rows, key
  columns), layer by layer, as CircuitsVis shows them. Click one (or press Enter on it) to
  enlarge it below; the enlarged pattern marks the chosen query's row. A previous-token
  head is a line just below the diagonal, an induction head a stripe in the rows of a
  repeated segment.
* **one query**: the sequence's tokens, each shaded by the weight the chosen head gives it
  from the chosen query. Hover a token to preview it, click it to choose it, or Tab into the
  row and use the arrow keys, Home and End. A line of text names the three keys with the
  largest weights (only keys the query may attend to).
* a colour legend (the shade is the square root of the weight, so that weights of a few
  hundredths still show), and the marked ``spans`` (e.g. a segment and its copy), drawn as
  underlines below the tokens and as brackets beside the patterns.

The interface is written in English, or in Chinese after
``mha.course.plotting.use_language("zh")`` (the Chinese edition does that), or as
``language=`` says. The data are inlined as JSON and the script is ``explorer.js``, shipped
in this package and written for it: nothing is loaded from a CDN, so the view also works in
the built book opened from ``file://`` with the network off.

``explore(model, tokens)`` runs a model that returns ``(logits, weights)`` with
``need_weights=True`` (e.g. :class:`mha.course.induction.AttentionOnly`) and shows its
weights.
"""
from __future__ import annotations

import html
import itertools
import json
from importlib import resources

import torch

from . import plotting

_ids = itertools.count()

# Every word the view shows, per language ("{l}", "{h}", ... are filled in by the script).
INTERFACE = {
    "en": {"layer": "Layer", "head": "Head", "layer_name": "layer {l}", "head_name": "head {h}",
           "all_heads": "all heads", "query_row": "the chosen query's row",
           "enlarge": "{layer}, {head}: show this pattern larger",
           "pattern": "{layer}, {head}: attention pattern, query rows against key columns",
           "tokens": "tokens: hover to preview, click or use the arrow keys to choose the query",
           "token": "{token} (position {i}), weight {w}",
           "attends": "{layer}, {head}: query \u201c{token}\u201d ({i}) attends most to {top}",
           "legend": "attention weight", "queries": "queries \u2193", "keys": "keys \u2192",
           "needs_js": "(this view needs JavaScript)"},
    "zh": {"layer": "层", "head": "头", "layer_name": "第 {l} 层", "head_name": "头 {h}",
           "all_heads": "所有头", "query_row": "所选查询所在的行",
           "enlarge": "{layer}，{head}：放大这个模式",
           "pattern": "{layer}，{head}：注意力模式，行是查询，列是键",
           "tokens": "词元：悬停可预览，点击或用方向键选择查询",
           "token": "{token}（位置 {i}），权重 {w}",
           "attends": "{layer}，{head}：查询\u201c{token}\u201d（{i}）最关注 {top}",
           "legend": "注意力权重", "queries": "查询 \u2193", "keys": "键 \u2192",
           "needs_js": "（此视图需要 JavaScript）"},
}


def _script() -> str:
    return resources.files("mha.course").joinpath("explorer.js").read_text(encoding="utf-8")


def _as_layers(weights) -> torch.Tensor:
    """Any of ``[T, T]``, ``[H, T, T]``, ``[layers, H, T, T]`` or a list of ``[1, H, T, T]``
    (one per layer, a batch of one) -> ``[layers, H, T, T]``."""
    if isinstance(weights, (list, tuple)):
        if not weights:
            raise ValueError("weights is an empty list: give one [1, H, T, T] tensor per layer")
        weights = torch.stack([_one_sequence(torch.as_tensor(w)) for w in weights])
    weights = torch.as_tensor(weights).detach().float().cpu()
    if weights.dim() == 2:
        weights = weights[None, None]
    elif weights.dim() == 3:
        weights = weights[None]
    if weights.dim() != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            "weights must be [T, T], [H, T, T], [layers, H, T, T] or a list with one "
            f"[1, H, T, T] per layer (self-attention: as many keys as queries); got shape "
            f"{list(weights.shape)}")
    return weights


def _one_sequence(w: torch.Tensor) -> torch.Tensor:
    if w.dim() == 4:
        if w.shape[0] != 1:
            raise ValueError(f"a layer's weights have a batch of {w.shape[0]} sequences; "
                             f"pick one, e.g. weights[0:1] -> [1, H, T, T]")
        w = w[0]
    return w


def _check_spans(spans, T: int) -> list:
    """``[(first, last, label), ...]`` with ``0 <= first <= last < T`` (both included)."""
    checked = []
    for span in spans or ():
        if len(span) != 3:
            raise ValueError(f"a span is (first, last, label); got {span!r}")
        first, last, label = int(span[0]), int(span[1]), str(span[2])
        if not 0 <= first <= last < T:
            raise ValueError(f"span {label!r} covers positions {first}..{last}, but the "
                             f"sequence has positions 0..{T - 1} (first <= last, both included)")
        checked.append([first, last, label])
    return checked


class AttentionView:
    """The HTML view (``_repr_html_``) of attention weights ``[layers, H, T, T]``."""

    def __init__(self, weights, tokens, layer_names=None, query=None, title="Attention",
                 spans=None, language=None):
        self.weights = _as_layers(weights)
        n_layers, n_heads, T, _ = self.weights.shape
        self.tokens = [str(t) for t in tokens]
        if len(self.tokens) != T:
            raise ValueError(f"{len(self.tokens)} tokens for weights over {T} positions")
        self.language = plotting.language() if language is None else language
        if self.language not in INTERFACE:
            raise ValueError(f"language must be one of {sorted(INTERFACE)}; got {self.language!r}")
        words = INTERFACE[self.language]
        self.layer_names = list(layer_names or [words["layer_name"].format(l=i)
                                                for i in range(n_layers)])
        if len(self.layer_names) != n_layers:
            raise ValueError(f"{len(self.layer_names)} layer names for {n_layers} layers")
        self.query = T - 1 if query is None else int(query)
        if not 0 <= self.query < T:
            raise ValueError(f"query {self.query} is not a position of the {T} tokens (0..{T - 1})")
        self.title = title
        self.spans = _check_spans(spans, T)

    def data(self) -> dict:
        """The JSON the script reads. A causal row keeps only its keys ``0..t``."""
        w = self.weights
        causal = bool((torch.triu(w, diagonal=1).abs() < 1e-6).all())
        rows = [[[[round(x, 3) for x in w[l, h, t, : t + 1 if causal else None].tolist()]
                  for t in range(w.shape[2])] for h in range(w.shape[1])]
                for l in range(w.shape[0])]
        words = INTERFACE[self.language]
        return {"tokens": self.tokens, "layers": self.layer_names,
                "heads": [words["head_name"].format(h=h) for h in range(w.shape[1])],
                "weights": rows, "query": self.query, "causal": causal,
                "spans": self.spans, "words": words}

    def _repr_html_(self) -> str:
        uid = f"mha-explorer-{next(_ids)}"
        words = INTERFACE[self.language]
        # "</" cannot end the JSON's <script> element early once escaped
        payload = json.dumps(self.data(), separators=(",", ":")).replace("</", "<\\/")
        layer_opts = "".join(f"<option>{html.escape(n)}</option>" for n in self.layer_names)
        head_opts = "".join(f"<option>{html.escape(n)}</option>" for n in self.data()["heads"])
        hide_layer = ' style="display:none"' if len(self.layer_names) == 1 else ""
        e = html.escape
        return f"""<div class="mha-explorer" id="{uid}" role="group" aria-label="{e(self.title)}" lang="{'zh-CN' if self.language == 'zh' else 'en'}">
<style>
#{uid} {{font-family: sans-serif; font-size: 14px; color: #111; background: #fff; padding: 6px;}}
#{uid} label {{margin-right: 12px;}}
#{uid} .mha-title {{font-weight: bold; margin: 2px 0 6px;}}
#{uid} .mha-grid {{display: flex; flex-direction: column; gap: 4px; margin: 6px 0;}}
#{uid} .mha-grid-row {{display: flex; flex-wrap: wrap; align-items: center; gap: 4px;}}
#{uid} .mha-grid-row > span {{min-width: 4.5em; font-size: 12px;}}
#{uid} .mha-thumb {{padding: 1px; border: 2px solid #767676; background: #fff; cursor: pointer; line-height: 0;}}
#{uid} .mha-thumb[aria-pressed="true"] {{border-color: #1a4f8b; outline: 2px solid #1a4f8b;}}
#{uid} .mha-thumb:focus-visible, #{uid} .mha-token:focus-visible {{outline: 3px solid #1a4f8b; outline-offset: 1px;}}
#{uid} canvas {{image-rendering: pixelated;}}
#{uid} canvas.mha-big {{max-width: 100%; height: auto;}}
#{uid} .mha-big-wrap {{display: flex; gap: 8px; align-items: flex-start; flex-wrap: wrap;}}
#{uid} .mha-axis {{font-size: 12px; color: #333;}}
#{uid} .mha-tokens {{display: flex; flex-wrap: wrap; gap: 2px; margin: 6px 0;}}
#{uid} .mha-token {{font-family: monospace; font-size: 13px; color: #111; border: 1px solid #767676;
  border-radius: 3px; padding: 2px 4px; min-width: 24px; cursor: pointer; border-bottom-width: 4px;}}
#{uid} .mha-token[aria-pressed="true"] {{outline: 2px solid #1a4f8b; border-color: #1a4f8b;}}
#{uid} .mha-info {{margin: 4px 0; min-height: 1.3em;}}
#{uid} .mha-legend {{display: flex; flex-wrap: wrap; align-items: center; gap: 6px; font-size: 12px;}}
#{uid} .mha-ramp {{display: inline-block; width: 120px; height: 12px; border: 1px solid #767676;}}
#{uid} .mha-swatch {{display: inline-block; width: 18px; height: 4px; vertical-align: middle;}}
</style>
<div class="mha-title">{e(self.title)}</div>
<div class="mha-legend"></div>
<div><span{hide_layer}><label>{e(words["layer"])} <select class="mha-layer">{layer_opts}</select></label></span>
<label>{e(words["head"])} <select class="mha-head">{head_opts}</select></label></div>
<div class="mha-grid" role="group" aria-label="{e(words["all_heads"])}"></div>
<div class="mha-big-wrap"><canvas class="mha-big" role="img" width="256" height="256"></canvas>
<div class="mha-axis"><div>{e(words["queries"])}</div><div>{e(words["keys"])}</div></div></div>
<div class="mha-tokens" role="group" aria-label="{e(words["tokens"])}"></div>
<p class="mha-info" aria-live="polite">{e(words["needs_js"])}</p>
<script type="application/json">{payload}</script>
<script>{_script()}</script>
</div>"""


def show_attention(weights, tokens, layer_names=None, query=None, title="Attention",
                   spans=None, language=None) -> AttentionView:
    """An interactive view of attention weights (display it, or leave it last in a cell).

    ``weights``: ``[T, T]``, ``[H, T, T]``, ``[layers, H, T, T]`` (rows are queries, columns
    keys, as ``[B, H, L, S]`` without the batch), or a list with one ``[1, H, T, T]`` per
    layer. ``tokens``: the ``T`` token strings. ``query``: the position shown first (the
    last one by default). ``spans``: parts of the sequence to mark, ``[(first, last,
    label), ...]`` (positions included). ``language``: ``"en"`` or ``"zh"`` (by default the
    one :func:`mha.course.plotting.use_language` chose).
    """
    return AttentionView(weights, tokens, layer_names, query, title, spans, language)


@torch.no_grad()
def explore(model, tokens: torch.Tensor, labels=None, **kwargs) -> AttentionView:
    """Run ``model(tokens [1, T], need_weights=True) -> (logits, [weights per layer])`` and
    show its weights; ``labels`` are the token strings (the token ids by default)."""
    if tokens.dim() == 1:
        tokens = tokens[None]
    was_training = model.training
    model.eval()
    try:
        _, weights = model(tokens[:1], need_weights=True)
    finally:
        model.train(was_training)
    labels = [str(t) for t in tokens[0].tolist()] if labels is None else labels
    return show_attention(weights, labels, **kwargs)
