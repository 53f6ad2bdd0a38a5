"""Boolean attention masks. Convention: ``True`` = "this query may attend to this key".

This is the polarity of ``F.scaled_dot_product_attention`` and of
``scores.masked_fill(mask == 0, ...)``. ``nn.MultiheadAttention``'s ``attn_mask`` and
``key_padding_mask`` use the opposite (``True`` = blocked): pass ``~mask`` there.
"""
from __future__ import annotations

import torch


def causal_mask(L: int, S: int | None = None, device=None) -> torch.Tensor:
    """Boolean ``[L, S]`` mask; query ``i`` may see keys ``0 .. S-L+i``.

    The queries are the *last* ``L`` positions of a sequence of length ``S``
    (bottom-right alignment): query ``i`` sits at absolute position ``S - L + i``.
    With ``S == L`` this is the usual lower triangle; with a KV cache (``L = 1``,
    ``S`` = tokens so far) the single new query sees every cached key.
    Equals ``torch.ones(L, S).tril(S - L).bool()``.
    """
    S = L if S is None else S
    if L < 0 or S < 0:
        raise ValueError(f"causal_mask needs non-negative lengths, got L={L}, S={S}")
    return torch.ones(L, S, dtype=torch.bool, device=device).tril(diagonal=S - L)


def padding_mask(lengths: torch.Tensor, S: int) -> torch.Tensor:
    """Boolean ``[B, 1, 1, S]`` mask, ``True`` where key ``j < lengths[b]``.

    The two singleton axes broadcast over heads and queries, so the same mask works
    for ``[B, H, L, S]`` scores in self- and cross-attention.
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be a 1-D tensor [B], got shape {list(lengths.shape)}")
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > S):
        raise ValueError(
            f"every length must lie in 0..S={S}; got lengths={lengths.tolist()}"
        )
    positions = torch.arange(S, device=lengths.device)  # [S]
    return (positions[None, :] < lengths[:, None])[:, None, None, :]
