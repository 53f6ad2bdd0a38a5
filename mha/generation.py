"""Text generation with a decoder-only model: prefill the prompt, then decode token by token."""
from __future__ import annotations

import contextlib

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


@torch.no_grad()
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
) -> torch.Tensor:
    """Continue ``prompt`` ``[B, T0]`` by up to ``max_new_tokens``: LongTensor ``[B, T0 + n]``.

    ``model`` is an :class:`mha.GPT` (``model(tokens, caches)`` -> logits ``[B, T, V]``).
    Each step takes the last position's logits and picks one token per row with
    :func:`mha.sampling.sample_next` (``temperature=0``: greedy argmax; otherwise
    temperature, top-k, top-p, then ``torch.multinomial`` with ``generator``).

    With ``use_cache=True`` the prompt is *prefilled* in one parallel pass that fills the
    KV caches, then each step feeds only the newest token (one query against the cache);
    with ``False`` every step re-runs the whole sequence. Both give the same tokens.
    A row that emitted ``eos_id`` is padded with ``eos_id`` and generation stops when every
    row has finished (finished rows still draw from ``generator``, so the random stream,
    and thus the result, does not depend on when other rows finish).

    With learned positions the whole result must fit in ``max_len``: unlike nanoGPT, which
    crops the context and silently forgets the start of the text, we raise.
    """
    if prompt.dim() != 2:
        raise ValueError(f"prompt must be a 2-D tensor of token ids [B, T0]; got shape "
                         f"{list(prompt.shape)}")
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0; got {max_new_tokens}")
    check_sampling_args(temperature, top_k, top_p)
    config = model.config
    if config.positions == "learned" and prompt.shape[1] + max_new_tokens > config.max_len:
        raise ValueError(
            f"prompt length {prompt.shape[1]} + max_new_tokens {max_new_tokens} exceeds "
            f"max_len={config.max_len} of this model's learned positions")
    B = prompt.shape[0]
    tokens = prompt
    finished = torch.zeros(B, dtype=torch.bool, device=prompt.device)
    with eval_mode(model):
        caches = model.new_caches() if use_cache else None
        step_input = prompt  # the first step with a cache is the prefill
        for _ in range(max_new_tokens):
            logits = model(step_input if use_cache else tokens, caches)[:, -1]  # [B, V]
            next_token = sample_next(logits, temperature, top_k, top_p, generator)  # [B, 1]
            if eos_id is not None:
                next_token = next_token.masked_fill(finished[:, None], eos_id)
                finished |= next_token[:, 0] == eos_id
            tokens = torch.cat([tokens, next_token], dim=1)
            step_input = next_token
            if eos_id is not None and finished.all():
                break
    return tokens
