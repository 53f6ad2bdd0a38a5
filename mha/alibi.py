"""ALiBi: attention with linear biases (Press, Smith & Lewis, 2022, "Train Short, Test Long").

ALiBi adds no position vector to the tokens. Instead each head ``h`` adds
``-m_h * (distance from the query to the key)`` to its attention scores, so a head
forgets faraway tokens at its own rate ``m_h`` (its *slope*).

Convention (same as :func:`mha.causal_mask`): the ``L`` queries are the *last* ``L``
positions of a sequence of ``S`` keys, so query ``i`` sits at absolute position
``S - L + i`` and key ``j`` at position ``j``. The bias is
``bias[h, i, j] = -m_h * ((S - L + i) - j)``: 0 on the query's own key, more negative
the further back the key. Keys in the future (``j > S - L + i``) get a positive value;
the causal mask removes them. The same formula gives the bias of one decoding step
with a KV cache (``L = 1``): the last row of the full bias.
"""
from __future__ import annotations

import math

import torch


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """The ``[H]`` slopes of the ALiBi paper: a geometric sequence.

    For ``H`` a power of two the slopes are ``2^(-8/H), 2^(-16/H), ..., 2^(-8)``; for
    ``H = 8``: ``1/2, 1/4, ..., 1/256``. Otherwise (as in the paper's reference code) take
    the slopes of the largest power of two ``n < H`` and fill the remaining ``H - n``
    heads with every other slope of ``2n`` heads, which lie in between.
    """
    if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive integer, got num_heads={num_heads!r}")

    def power_of_two_slopes(n: int) -> list[float]:
        ratio = 2.0 ** (-8.0 / n)
        return [ratio ** (h + 1) for h in range(n)]

    n = 2 ** math.floor(math.log2(num_heads))
    slopes = power_of_two_slopes(n)
    if n < num_heads:
        slopes += power_of_two_slopes(2 * n)[0::2][: num_heads - n]
    return torch.tensor(slopes)


def alibi_bias(num_heads: int, L: int, S: int | None = None, device=None) -> torch.Tensor:
    """Float ``[H, L, S]`` additive bias ``-slope_h * (S - L + i - j)`` (see module doc).

    Add it to the scores ``[B, H, L, S]`` before the softmax, together with the causal
    mask. ``S`` defaults to ``L``.
    """
    S = L if S is None else S
    if L < 0 or S < L:
        raise ValueError(
            f"alibi_bias puts the L queries at the end of the S keys, so it needs "
            f"0 <= L <= S; got L={L}, S={S}"
        )
    query_pos = torch.arange(S - L, S, device=device)  # [L] absolute positions
    key_pos = torch.arange(S, device=device)  # [S]
    offset = (key_pos[None, :] - query_pos[:, None]).float()  # [L, S]: j - (S - L + i), <= 0 in the past
    slopes = alibi_slopes(num_heads).to(device)  # [H]
    return slopes[:, None, None] * offset  # [H, L, S]
