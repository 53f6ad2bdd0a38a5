"""The encoder-decoder Transformer, built from this package's own pieces."""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from .cache import KVCache, StaticKVCache
from .multihead import MultiHeadAttention
from .norms import LayerNorm
from .positional import sinusoidal_positions


class FeedForward(nn.Module):
    """Position-wise FFN: ``[B, L, d_model] -> [B, L, d_ff] -> ReLU -> [B, L, d_model]``.

    The same two linear maps are applied to every position independently; this is where
    most of a Transformer's parameters live (``d_ff`` is usually ``4 * d_model``).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.expand = nn.Linear(d_model, d_ff)
        self.contract = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.contract(self.dropout(torch.relu(self.expand(x))))


class EncoderLayer(nn.Module):
    """Self-attention and FFN, each wrapped in a residual connection and a LayerNorm.

    ``norm_first=False`` is the Post-LN wiring of the 2017 paper, ``x = norm(x + f(x))``;
    ``norm_first=True`` is Pre-LN, ``x = x + f(norm(x))``, which leaves an un-normalised
    path from the input to the output and trains more stably in deep stacks.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False, num_kv_heads=None):
        super().__init__()
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, num_kv_heads=num_kv_heads)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = LayerNorm(d_model), LayerNorm(d_model)

    def forward(self, x, mask=None, need_weights=False):
        """``x`` ``[B, S, D]`` -> ``([B, S, D], self-attention weights [B, H, S, S] | None)``."""
        if self.norm_first:  # Pre-LN: x + f(norm(x))
            h, weights = self.self_attn(self.norm1(x), mask=mask, need_weights=need_weights)
            x = x + self.dropout(h)
            x = x + self.dropout(self.ff(self.norm2(x)))
        else:  # Post-LN: norm(x + f(x))
            h, weights = self.self_attn(x, mask=mask, need_weights=need_weights)
            x = self.norm1(x + self.dropout(h))
            x = self.norm2(x + self.dropout(self.ff(x)))
        return x, weights


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder memory, then the FFN.

    Each of the three sublayers is wrapped like :class:`EncoderLayer`'s: Post-LN
    ``x = norm(x + f(x))`` or, with ``norm_first=True``, Pre-LN ``x = x + f(norm(x))``.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False, num_kv_heads=None):
        super().__init__()
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, num_kv_heads=num_kv_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, num_kv_heads=num_kv_heads)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = LayerNorm(d_model), LayerNorm(d_model), LayerNorm(d_model)

    def forward(self, x, memory, self_mask=None, memory_mask=None, caches=None,
                need_weights=False, is_causal=False, cache_position=None):
        """``x`` ``[B, T, D]``, ``memory`` ``[B, S, D]`` -> ``[B, T, D]`` and the weights.

        Queries come from the decoder (``x``); in cross-attention keys and values come from
        the encoder ``memory``. ``caches`` is ``(self_cache, cross_cache)`` when decoding
        step by step. ``is_causal=True`` adds the causal mask to ``self_mask`` (see
        :class:`mha.MultiHeadAttention`); ``cache_position`` is the self-attention cache's
        slots for a fixed-shape step. The weights are ``(self [B, H, T, T], cross [B, H, T, S])`` or Nones.
        """
        self_cache, cross_cache = caches if caches is not None else (None, None)
        if self.norm_first:  # Pre-LN: x + f(norm(x))
            h, self_w = self.self_attn(self.norm1(x), mask=self_mask, need_weights=need_weights,
                                       cache=self_cache, is_causal=is_causal,
                                       cache_position=cache_position)
            x = x + self.dropout(h)
            h, cross_w = self.cross_attn(self.norm2(x), memory, mask=memory_mask,
                                         need_weights=need_weights, cache=cross_cache)
            x = x + self.dropout(h)
            x = x + self.dropout(self.ff(self.norm3(x)))
        else:  # Post-LN: norm(x + f(x))
            h, self_w = self.self_attn(x, mask=self_mask, need_weights=need_weights,
                                       cache=self_cache, is_causal=is_causal,
                                       cache_position=cache_position)
            x = self.norm1(x + self.dropout(h))
            h, cross_w = self.cross_attn(x, memory, mask=memory_mask,
                                         need_weights=need_weights, cache=cross_cache)
            x = self.norm2(x + self.dropout(h))
            x = self.norm3(x + self.dropout(self.ff(x)))
        return x, (self_w, cross_w)


class Transformer(nn.Module):
    """Encoder-decoder Transformer for sequence-to-sequence tasks.

    Masks follow the package convention (boolean, ``True`` = may attend):
    ``src_mask`` (e.g. :func:`mha.padding_mask` ``[B, 1, 1, S]``) masks the encoder's
    self-attention *and* the decoder's cross-attention; the decoder's self-attention is
    always causal, and ``tgt_mask`` (e.g. target padding) is combined with that.
    ``norm_first=True`` gives the Pre-LN variant, with a final LayerNorm on both stacks.
    ``num_layers`` sets the depth of both stacks; ``num_encoder_layers`` or
    ``num_decoder_layers`` override it for one of them.
    """

    def __init__(self, src_vocab, tgt_vocab, d_model, num_heads, num_layers, d_ff,
                 dropout=0.0, norm_first=False, max_len=512, num_kv_heads=None, *,
                 num_encoder_layers=None, num_decoder_layers=None):
        super().__init__()
        # num_layers sets both depths; either stack can be given its own
        num_encoder_layers = num_layers if num_encoder_layers is None else num_encoder_layers
        num_decoder_layers = num_layers if num_decoder_layers is None else num_decoder_layers
        for name, n in (("num_encoder_layers", num_encoder_layers),
                        ("num_decoder_layers", num_decoder_layers)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {name}={n!r}")
        self.d_model, self.max_len = d_model, max_len
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model)
        self.register_buffer("positions", sinusoidal_positions(max_len, d_model), persistent=False)
        layer_args = (d_model, num_heads, d_ff, dropout, norm_first, num_kv_heads)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(*layer_args) for _ in range(num_encoder_layers))
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(*layer_args) for _ in range(num_decoder_layers))
        # Pre-LN leaves the residual stream un-normalised, so each stack ends with a norm.
        self.encoder_norm = LayerNorm(d_model) if norm_first else nn.Identity()
        self.decoder_norm = LayerNorm(d_model) if norm_first else nn.Identity()
        self.generator = nn.Linear(d_model, tgt_vocab)
        self.dropout = nn.Dropout(dropout)

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        """Source ids ``[B, S]`` -> ``[B, S, D]``: the encoder's input."""
        return self._embed(src, self.src_embed, 0)

    def embed_target(self, tgt: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Target ids ``[B, T]`` at positions ``start .. start + T - 1`` -> ``[B, T, D]``.

        ``start`` is the number of tokens already decoded (the KV cache's length).
        """
        return self._embed(tgt, self.tgt_embed, start)

    def _embed(self, tokens: torch.Tensor, table: nn.Embedding, start: int) -> torch.Tensor:
        """Token ids ``[B, T]`` -> ``[B, T, D]``: scaled embeddings plus positions."""
        if tokens.dim() != 2:
            raise ValueError(
                f"token ids must be a 2-D tensor [B, T]; got shape {list(tokens.shape)}")
        end = start + tokens.shape[1]
        if end > self.max_len:
            raise ValueError(
                f"sequence positions {start}..{end - 1} exceed max_len={self.max_len}; "
                f"build the Transformer with a larger max_len")
        # sqrt(d_model) brings the embeddings to the scale of the positional table
        x = table(tokens) * math.sqrt(self.d_model) + self.positions[start:end]  # [B, T, D]
        return self.dropout(x)

    def encode(self, src, src_mask=None, need_weights=False):
        """Source ids ``[B, S]`` -> memory ``[B, S, D]`` (and per-layer weights if asked)."""
        x = self.embed_source(src)
        all_weights = []
        for layer in self.encoder_layers:
            x, weights = layer(x, src_mask, need_weights)
            all_weights.append(weights)
        x = self.encoder_norm(x)
        return (x, all_weights) if need_weights else x

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None, caches=None,
               need_weights=False, cache_position=None):
        """Target ids ``[B, T]`` -> logits ``[B, T, tgt_vocab]``.

        With ``caches`` (from :meth:`new_caches`), ``tgt`` holds only the new tokens; they
        are placed after the cached ones, for both the positions and the causal mask.
        ``cache_position`` ``[T]`` (with :class:`mha.StaticKVCache` self-attention caches,
        after the first step) is the fixed-shape form of a step for a compiled decoder, as
        in :meth:`mha.GPT.forward`: the new tokens sit at these slots, attention reads every
        slot and a mask hides those after each query; ``len(cache)`` is not advanced.
        """
        T = tgt.shape[1]
        if cache_position is not None:
            self._check_cache_position(cache_position, caches, T)
            x = self._embed_at(tgt, cache_position)
            slots = torch.arange(caches[0][0].max_len, device=tgt.device)  # [S]
            self_mask = slots <= cache_position[:, None]  # [T, S]: up to each query's slot
            if tgt_mask is not None:
                self_mask = self_mask & tgt_mask
            is_causal = False  # the mask above is already causal
        else:
            start = len(caches[0][0]) if caches is not None else 0
            x = self.embed_target(tgt, start)
            self_mask = tgt_mask
            # the new queries are the last T of start + T positions (bottom-right alignment);
            # one new query (a cached decoding step) may see every key: nothing to hide
            is_causal = T > 1
        all_weights = []
        for i, layer in enumerate(self.decoder_layers):
            x, weights = layer(x, memory, self_mask, src_mask,
                               caches[i] if caches is not None else None, need_weights,
                               is_causal=is_causal, cache_position=cache_position)
            all_weights.append(weights)
        logits = self.generator(self.decoder_norm(x))
        return (logits, all_weights) if need_weights else logits

    def _embed_at(self, tgt: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        """Target ids ``[B, T]`` at the positions ``cache_position`` ``[T]`` -> ``[B, T, D]``."""
        x = self.tgt_embed(tgt) * math.sqrt(self.d_model) + self.positions[cache_position]
        return self.dropout(x)

    def _check_cache_position(self, cache_position, caches, T) -> None:
        if caches is None or not all(isinstance(c, StaticKVCache) and c.filled for c, _ in caches):
            raise ValueError("cache_position needs the StaticKVCache caches of new_caches(max_len), "
                             "filled by a first decoding step")
        if tuple(cache_position.shape) != (T,):
            raise ValueError(f"cache_position must be [T] = [{T}], one slot per new token; got "
                             f"shape {list(cache_position.shape)}")
        if caches[0][0].max_len > self.max_len:
            raise ValueError(f"the caches hold {caches[0][0].max_len} positions but this "
                             f"Transformer has positions for max_len={self.max_len}")

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        """Teacher forcing: ``src`` ``[B, S]``, ``tgt`` ``[B, T]`` -> logits ``[B, T, V]``.

        All ``T`` target positions are predicted in one parallel pass; the causal mask
        stops position ``t`` from seeing targets after ``t``.
        """
        return self.decode(tgt, self.encode(src, src_mask), src_mask, tgt_mask)

    def attention_maps(self, src, tgt, src_mask=None, tgt_mask=None) -> dict:
        """Per-layer attention weights of a teacher-forced pass, for inspection.

        Returns ``{"encoder": [...], "decoder_self": [...], "decoder_cross": [...]}``,
        one ``[B, H, L, S]`` tensor per layer.
        """
        memory, enc = self.encode(src, src_mask, need_weights=True)
        _, dec = self.decode(tgt, memory, src_mask, tgt_mask, need_weights=True)
        return {"encoder": enc, "decoder_self": [w[0] for w in dec],
                "decoder_cross": [w[1] for w in dec]}

    def new_caches(self, max_len: int | None = None) -> list[tuple[KVCache, KVCache]]:
        """Empty ``(self-attention, cross-attention)`` caches, one pair per decoder layer.

        The self-attention caches grow (:class:`mha.KVCache`), or, given ``max_len``, are
        preallocated for that many target tokens (:class:`mha.StaticKVCache`).
        """
        def self_cache():
            return KVCache() if max_len is None else StaticKVCache(max_len)
        return [(self_cache(), KVCache(static=True)) for _ in self.decoder_layers]
