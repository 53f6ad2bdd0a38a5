"""Text generation with a decoder-only model: prefill the prompt, then decode token by token."""
from __future__ import annotations

import contextlib
import functools

import torch
import torch.nn as nn

from .sampling import check_sampling_args, sample_next


@contextlib.contextmanager
def eval_mode(model: nn.Module):
    """Run the block with ``model.eval()`` (no dropout) and restore train/eval mode after."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def generate(
    model,
    prompt: torch.Tensor,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    eos_id: int | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    attention_mask: torch.Tensor | None = None,
    static_cache: bool = False,
    compile: bool = False,
) -> torch.Tensor:
    """Continue ``prompt`` ``[B, T0]`` by up to ``max_new_tokens``: LongTensor ``[B, T0 + n]``.

    ``model`` is an :class:`mha.GPT` (``model(tokens, caches)`` -> logits ``[B, T, V]``).
    Each step takes the last position's logits and picks one token per row with
    :func:`mha.sampling.sample_next` (``temperature=0``: greedy argmax; otherwise
    temperature, top-k, top-p, then ``torch.multinomial`` with ``generator``).

    With ``use_cache=True`` the prompt is *prefilled* in one parallel pass that fills the
    KV caches, then each step feeds only the newest token (one query against the cache);
    with ``False`` every step re-runs the whole sequence. Both give the same tokens.
    ``static_cache=True`` preallocates every cache for all ``T0 + max_new_tokens`` positions
    (:class:`mha.StaticKVCache`, written in place) instead of growing it.
    ``compile=True`` (with ``static_cache=True``) runs each step after the prefill through
    ``torch.compile`` in its fixed-shape form (``cache_position``, see :meth:`mha.GPT.forward`):
    every step then has the same shapes, so it is compiled once (tens of seconds on a CPU)
    and, on a CUDA GPU, captured as one CUDA graph and replayed (``mode="reduce-overhead"``)
    instead of launching a hundred small kernels per step. The same tokens as without it,
    up to float rounding of the compiled kernels.
    A row that emitted ``eos_id`` is padded with ``eos_id`` and generation stops when every
    row has finished (finished rows still draw from ``generator``, so the random stream,
    and thus the result, does not depend on when other rows finish).

    Prompts of different lengths decode together when they are *left*-padded, with
    ``attention_mask`` ``[B, T0]`` (1 = real token, 0 = padding), as in transformers: the
    padding is hidden from every query, each row's positions count its real tokens only,
    and every new token is real. Each row then gets the tokens it would get alone (up to
    float rounding, which can flip a near-tie of greedy's argmax). Left, because every row
    must end with a real token: its last logits predict the next one.
    With ``rope_scaling="dynamic"`` past the trained length neither promise holds (nor in
    transformers): dynamic NTK takes its base from the largest position of each call (of
    the whole batch), so cached keys keep older angles and a short row gets a long row's.

    With learned positions the whole result must fit in ``max_len``: unlike nanoGPT, which
    crops the context and silently forgets the start of the text, we raise.

    The loop runs under ``torch.inference_mode()`` (no graph, and none of autograd's
    per-op bookkeeping; see :func:`mha.greedy_decode`); the result is an ordinary tensor.
    """
    if prompt.dim() != 2:
        raise ValueError(f"prompt must be a 2-D tensor of token ids [B, T0]; got shape "
                         f"{list(prompt.shape)}")
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0; got {max_new_tokens}")
    check_sampling_args(temperature, top_k, top_p)
    if compile and not (use_cache and static_cache):
        raise ValueError("compile=True compiles the fixed-shape step of the static cache: "
                         "pass use_cache=True and static_cache=True with it")
    if attention_mask is not None:
        check_left_padded(attention_mask, prompt)
    config = model.config
    longest = prompt.shape[1] if attention_mask is None else int(attention_mask.sum(-1).max())
    if config.positions == "learned" and longest + max_new_tokens > config.max_len:
        raise ValueError(
            f"prompt length {longest} + max_new_tokens {max_new_tokens} exceeds "
            f"max_len={config.max_len} of this model's learned positions")
    B = prompt.shape[0]
    tokens = prompt
    mask = attention_mask
    finished = torch.zeros(B, dtype=torch.bool, device=prompt.device)
    with torch.inference_mode(), eval_mode(model):
        caches = None
        if use_cache:
            caches = model.new_caches(prompt.shape[1] + max_new_tokens if static_cache else None)
        if compile:  # the steps after the prefill see every slot of the caches' buffers
            step = compiled_step(_gpt_step, prompt.device)
            slots = torch.arange(prompt.shape[1], prompt.shape[1] + max_new_tokens,
                                 device=prompt.device)  # [n]: where each new token goes
            full_mask = None  # [B, max_len]: the prompt's padding, and real new tokens
            if mask is not None:
                full_mask = torch.cat([mask, mask.new_ones(B, max_new_tokens)], dim=1)
        step_input = prompt  # the first step with a cache is the prefill
        for i in range(max_new_tokens):
            inputs = step_input if use_cache else tokens
            if compile and i > 0:
                logits = step(model, inputs, caches, full_mask, slots[i - 1:i])  # [B, V]
            else:
                logits = model(inputs, caches, attention_mask=mask)[:, -1]  # [B, V]
            next_token = sample_next(logits, temperature, top_k, top_p, generator)  # [B, 1]
            if eos_id is not None:
                next_token = next_token.masked_fill(finished[:, None], eos_id)
                finished |= next_token[:, 0] == eos_id
            tokens = torch.cat([tokens, next_token], dim=1)
            if mask is not None:  # the new token is real in every row
                mask = torch.cat([mask, mask.new_ones(B, 1)], dim=1)  # [B, t + 1]
            step_input = next_token
            if eos_id is not None and finished.all():
                break
    return tokens.clone()  # outside inference mode: an ordinary tensor


def _gpt_step(model, token, caches, attention_mask, cache_position):
    """One fixed-shape decoding step of an :class:`mha.GPT`: token ``[B, 1]`` -> logits of
    its position ``[B, V]``, its keys/values written at ``cache_position`` ``[1]``."""
    return model(token, caches, attention_mask=attention_mask,
                 cache_position=cache_position)[:, -1]


@functools.cache
def _compiled(fn, mode):
    return torch.compile(fn, mode=mode)


def compiled_step(fn, device: torch.device):
    """``fn`` compiled once per process and device kind (compiling is the slow part).

    On a CUDA GPU ``mode="reduce-overhead"`` records the step as a CUDA graph and replays
    it: one launch per step instead of one per kernel, which is what a one-token step,
    with its little arithmetic, spends its time on. Elsewhere the compiler fuses kernels.
    """
    mode = "reduce-overhead" if torch.device(device).type == "cuda" else None
    compiled = _compiled(fn, mode)

    def step(*args):
        torch.compiler.cudagraph_mark_step_begin()  # the last step's outputs are consumed
        return compiled(*args)
    return step


def check_left_padded(attention_mask: torch.Tensor, prompt: torch.Tensor) -> None:
    """Raise unless ``attention_mask`` is a ``[B, T0]`` 0/1 mask of left-padded prompts."""
    if tuple(attention_mask.shape) != tuple(prompt.shape):
        raise ValueError(f"attention_mask must have the prompt's shape {list(prompt.shape)}; "
                         f"got {list(attention_mask.shape)}")
    real = attention_mask.bool()
    if not real[:, -1].all():
        raise ValueError(
            "attention_mask: every prompt must end with a real token (1): pad on the left, "
            "so that each row's last logits predict its next token")
    # left padding: once a row has started (a 1), it never goes back to padding (0)
    if (real.long().cummax(dim=-1).values != real.long()).any():
        raise ValueError("attention_mask: padding (0) may only come before the real tokens "
                         "(left padding); found a 0 after a 1")
