"""An interactive attention viewer that works offline: Jupyter, Colab and the built book.

``show_attention(weights, tokens)`` returns an object that Jupyter displays as HTML: a
layer and a head picker (``<select>``) above the sequence's tokens. Hover a token, or focus
it (Tab into the row, then the arrow keys, Home and End), and every token is shaded by the
weight the chosen head gives it from that query; a line of text names the three keys with
the largest weights. The data are inlined as JSON and the script is ``explorer.js``,
shipped in this package and written for it: nothing is loaded from a CDN, so the view also
works in the built book opened from ``file://`` with the network off.

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

_ids = itertools.count()


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


class AttentionView:
    """The HTML view (``_repr_html_``) of attention weights ``[layers, H, T, T]``."""

    def __init__(self, weights, tokens, layer_names=None, query=None, title="Attention"):
        self.weights = _as_layers(weights)
        n_layers, n_heads, T, _ = self.weights.shape
        self.tokens = [str(t) for t in tokens]
        if len(self.tokens) != T:
            raise ValueError(f"{len(self.tokens)} tokens for weights over {T} positions")
        self.layer_names = list(layer_names or [f"layer {i}" for i in range(n_layers)])
        if len(self.layer_names) != n_layers:
            raise ValueError(f"{len(self.layer_names)} layer names for {n_layers} layers")
        self.query = T - 1 if query is None else int(query)
        self.title = title

    def data(self) -> dict:
        """The JSON the script reads. A causal row keeps only its keys ``0..t``."""
        w = self.weights
        causal = bool((torch.triu(w, diagonal=1).abs() < 1e-6).all())
        rows = [[[[round(x, 3) for x in w[l, h, t, : t + 1 if causal else None].tolist()]
                  for t in range(w.shape[2])] for h in range(w.shape[1])]
                for l in range(w.shape[0])]
        return {"tokens": self.tokens, "layers": self.layer_names,
                "heads": [f"head {h}" for h in range(w.shape[1])],
                "weights": rows, "query": self.query}

    def _repr_html_(self) -> str:
        uid = f"mha-explorer-{next(_ids)}"
        # "</" cannot end the JSON's <script> element early once escaped
        payload = json.dumps(self.data(), separators=(",", ":")).replace("</", "<\\/")
        layer_opts = "".join(f"<option>{html.escape(n)}</option>" for n in self.layer_names)
        head_opts = "".join(f"<option>head {h}</option>" for h in range(self.weights.shape[1]))
        hide_layer = ' style="display:none"' if len(self.layer_names) == 1 else ""
        return f"""<div class="mha-explorer" id="{uid}" role="group" aria-label="{html.escape(self.title)}">
<style>
#{uid} {{font-family: sans-serif; font-size: 14px; color: #111; background: #fff; padding: 6px;}}
#{uid} label {{margin-right: 12px;}}
#{uid} .mha-tokens {{display: flex; flex-wrap: wrap; gap: 2px; margin: 6px 0;}}
#{uid} .mha-token {{font-family: monospace; font-size: 13px; color: #111; border: 1px solid #999;
  border-radius: 3px; padding: 2px 4px; min-width: 24px; cursor: pointer;}}
#{uid} .mha-token[aria-pressed="true"] {{outline: 2px solid #1a4f8b; border-color: #1a4f8b;}}
#{uid} .mha-token:focus-visible {{outline: 3px solid #1a4f8b; outline-offset: 1px;}}
#{uid} .mha-info {{margin: 4px 0; min-height: 1.3em;}}
</style>
<div><span{hide_layer}><label>Layer <select class="mha-layer">{layer_opts}</select></label></span>
<label>Head <select class="mha-head">{head_opts}</select></label></div>
<div class="mha-tokens" aria-label="tokens: hover or focus one (arrow keys move) to see what it attends to"></div>
<p class="mha-info" aria-live="polite">(this view needs JavaScript)</p>
<script type="application/json">{payload}</script>
<script>{_script()}</script>
</div>"""


def show_attention(weights, tokens, layer_names=None, query=None,
                   title="Attention") -> AttentionView:
    """An interactive view of attention weights (display it, or leave it last in a cell).

    ``weights``: ``[T, T]``, ``[H, T, T]``, ``[layers, H, T, T]`` (rows are queries, columns
    keys, as ``[B, H, L, S]`` without the batch), or a list with one ``[1, H, T, T]`` per
    layer. ``tokens``: the ``T`` token strings. ``query``: the position shown first (the
    last one by default).
    """
    return AttentionView(weights, tokens, layer_names, query, title)


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
