"""Run a transformers model with our attention in place of its own, to compare whole models.

Each decoder layer's ``self_attn`` is replaced by :class:`Ours`, which calls one of our
modules with *our* mask (causal, or a sliding window) and *our* cache, and ignores the
mask and cache transformers built. So when the swapped model's logits or greedy tokens
equal those of the untouched model, our attention, our masks and our caches equal theirs.
The norms, MLPs and MoE experts around the attention stay transformers' own.
"""
import copy

import torch
import torch.nn as nn

import mha


class Ours(nn.Module):
    """Stands in for a transformers attention layer; ``make_mask(L, S)`` or ``cache.mask``."""

    def __init__(self, ours: nn.Module, window: int | None = None, **call_options):
        super().__init__()
        self.ours, self.window, self.call_options = ours, window, call_options
        self.cache = None

    def forward(self, hidden_states, position_ids=None, **ignored):
        L = hidden_states.shape[1]
        positions = position_ids[0]  # [L]: the same positions for every row
        if self.cache is not None:
            mask = self.cache.mask(L) if hasattr(self.cache, "mask") else \
                mha.causal_mask(L, len(self.cache) + L)
        elif self.window is None:
            mask = mha.causal_mask(L)
        else:
            mask = mha.sliding_window_mask(L, self.window)
        out, weights = self.ours(hidden_states, mask=mask, cache=self.cache, positions=positions,
                                 **self.call_options)
        return out, weights


def swapped(hf_model, make_ours):
    """A deep copy of ``hf_model`` whose layer ``i`` attends with ``make_ours(i, hf_attention)``
    (an :class:`Ours`)."""
    model = copy.deepcopy(hf_model)
    for i, layer in enumerate(model.model.layers):
        layer.self_attn = make_ours(i, layer.self_attn)
    return model


@torch.no_grad()
def greedy_with_our_caches(model, prompt: torch.Tensor, new_tokens: int, make_cache):
    """Greedy decoding of the swapped ``model``: the prompt in one pass, then one token at a
    time through our caches (``make_cache(i)`` for layer ``i``); transformers' own cache is
    off, so every step sees only the new token."""
    for i, layer in enumerate(model.model.layers):
        layer.self_attn.cache = make_cache(i)
    tokens, step, start = prompt, prompt, 0
    for _ in range(new_tokens):
        positions = torch.arange(start, start + step.shape[1])[None].expand(step.shape[0], -1)
        logits = model(input_ids=step, position_ids=positions, use_cache=False).logits
        start += step.shape[1]
        step = logits[:, -1:].argmax(-1)  # [B, 1]
        tokens = torch.cat([tokens, step], dim=1)
    for layer in model.model.layers:
        layer.self_attn.cache = None
    return tokens


def hf_greedy(hf_model, prompt: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """transformers' own greedy generation (its own cache and masks)."""
    with torch.no_grad():
        return hf_model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                 do_sample=False, attention_mask=torch.ones_like(prompt),
                                 pad_token_id=0)
