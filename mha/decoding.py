"""Autoregressive greedy decoding, with or without a KV cache."""
from __future__ import annotations

import torch

from .generation import compiled_step, eval_mode
from .transformer import Transformer


def greedy_decode(
    model: Transformer,
    src: torch.Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int | None,
    use_cache: bool = True,
    src_mask: torch.Tensor | None = None,
    static_cache: bool = False,
    compile: bool = False,
) -> torch.Tensor:
    """Generate target ids ``[B, <= max_len]``, one token per step, starting from ``bos_id``.

    Each step feeds what has been generated so far, keeps only the *last* position's
    logits, and appends their argmax. A row that has produced ``eos_id`` is finished and
    padded with ``eos_id``; decoding stops once every row is finished (never early when
    ``eos_id`` is ``None``). The output includes the leading ``bos_id``.

    ``use_cache=True`` keeps every layer's keys and values (:class:`mha.KVCache`), so each
    step projects only the newest token; ``use_cache=False`` re-runs the whole prefix.
    Both give the same tokens. ``static_cache=True`` preallocates each self-attention cache
    for all ``max_len`` tokens at once (:class:`mha.StaticKVCache`) instead of growing it.
    ``compile=True`` (with ``static_cache=True``) runs every step after the first through
    ``torch.compile`` in its fixed-shape form (see :func:`mha.generate`): the same tokens.
    The model runs in eval mode and is put back as it was.

    The loop runs under ``torch.inference_mode()``, PyTorch's context for pure inference:
    like ``torch.no_grad()`` it records no graph, and it also skips the bookkeeping that
    autograd could need later (version counters, view tracking). A cached step multiplies
    only ``B`` rows per matrix, so its time is mostly this kind of per-op overhead.
    The tokens are returned as an ordinary tensor, usable anywhere (also as training data).
    """
    if max_len < 1:
        raise ValueError(f"max_len counts the leading bos token, so it must be >= 1; got {max_len}")
    if compile and not (use_cache and static_cache):
        raise ValueError("compile=True compiles the fixed-shape step of the static cache: "
                         "pass use_cache=True and static_cache=True with it")
    with torch.inference_mode(), eval_mode(model):
        memory = model.encode(src, src_mask)
        B = src.shape[0]
        tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        finished = torch.zeros(B, dtype=torch.bool, device=src.device)
        caches = None
        if use_cache:
            caches = model.new_caches(max_len if static_cache else None)
        if compile:
            step = compiled_step(_decoder_step, src.device)
            slots = torch.arange(max_len, device=src.device)  # token t goes to slot t
        for i in range(max_len - 1):
            step_input = tokens[:, -1:] if use_cache else tokens
            if compile and i > 0:  # the first step fills the caches (and the memory's)
                last = step(model, step_input, memory, src_mask, caches, slots[i:i + 1])
            else:
                last = model.decode(step_input, memory, src_mask, caches=caches)[:, -1]
            next_token = last.argmax(dim=-1)  # [B]: only the last position matters
            if eos_id is not None:
                next_token = next_token.masked_fill(finished, eos_id)  # pad finished rows
                finished |= next_token == eos_id
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # [B, t + 1]
            if eos_id is not None and finished.all():
                break
    return tokens.clone()  # outside inference mode: an ordinary tensor


def _decoder_step(model, token, memory, src_mask, caches, cache_position):
    """One fixed-shape decoding step of a :class:`mha.Transformer`: token ``[B, 1]`` ->
    logits of its position ``[B, V]``, written at ``cache_position`` ``[1]``."""
    return model.decode(token, memory, src_mask, caches=caches,
                        cache_position=cache_position)[:, -1]
