"""Choosing the next token from the logits ``[B, V]`` of the last position.

Two pure filters cut the distribution (the removed entries become ``-inf``, so softmax
gives them probability 0), then :func:`sample_next` draws one token per row:

* temperature ``t``: ``softmax(logits / t)``; ``t < 1`` sharpens, ``t > 1`` flattens,
  ``t = 0`` is the limit, greedy argmax;
* top-k: keep the ``k`` most probable tokens;
* top-p ("nucleus", Holtzman et al., 2020): keep the smallest set of most probable tokens
  whose total probability reaches ``p``.

The order is transformers': temperature, then top-k, then top-p.
"""
from __future__ import annotations

import torch


def check_sampling_args(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """Raise a ``ValueError`` that names the bad argument (shared by the public entry points)."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy); got temperature={temperature}")
    if top_k is not None and (int(top_k) != top_k or top_k < 1):
        raise ValueError(f"top_k keeps the k most probable tokens, so k must be an integer >= 1; "
                         f"got k={top_k}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p is a probability mass and must lie in (0, 1]; got p={top_p}")


def top_k_logits(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the ``k`` largest logits of each row ``[..., V]``; set the others to ``-inf``.

    Entries tied with the k-th largest are kept too. ``k >= V`` keeps everything.
    """
    check_sampling_args(1.0, k, None)
    k = min(int(k), logits.shape[-1])
    kth = logits.topk(k, dim=-1).values[..., -1:]  # [..., 1]: the k-th largest per row
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_logits(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of most probable tokens whose probability sums to ``>= p``.

    Shapes ``[..., V] -> [..., V]``; the removed logits become ``-inf``. The most probable
    token is always kept, and ``p = 1`` keeps everything.
    """
    check_sampling_args(1.0, None, p)
    if p >= 1:
        return logits.clone()  # (summing floats could round a tail token away)
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    mass_before = probs.cumsum(dim=-1) - probs  # [..., V]: mass of the tokens ranked above
    # keep a token while the tokens above it have not reached p yet (the first: mass 0 < p)
    remove_sorted = mass_before >= p
    remove = remove_sorted.scatter(-1, order, remove_sorted)  # back to vocabulary order
    return logits.masked_fill(remove, float("-inf"))


def sample_next(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row: logits ``[B, V]`` -> ids ``[B, 1]``.

    ``temperature == 0`` is greedy (argmax, the filters do not matter); otherwise the
    logits are divided by the temperature, filtered by top-k and top-p, and one token is
    drawn per row with ``torch.multinomial`` and ``generator`` (reproducible).
    """
    check_sampling_args(temperature, top_k, top_p)
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_logits(logits, top_k)
    if top_p is not None:
        logits = top_p_logits(logits, top_p)
    probs = logits.float().softmax(dim=-1)  # [B, V]
    return torch.multinomial(probs, 1, generator=generator)  # [B, 1]
