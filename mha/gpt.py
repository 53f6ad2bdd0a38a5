"""A decoder-only language model: GPT-2's layout, and Llama's with ``style="llama"``.

tokens ``[B, T]`` -> token embeddings (+ learned positions) ``[B, T, D]`` -> ``num_layers``
blocks of causal self-attention and an MLP, each added to a residual stream ->
final norm -> logits ``[B, T, V]``. Position ``t``'s logits predict token ``t + 1``.

The two styles differ in four switches, all chosen in ``__init__`` from the config:

============  ======================  ===========================
switch        ``style="gpt2"``        ``style="llama"``
============  ======================  ===========================
positions     learned table           RoPE inside attention
norm          LayerNorm (with bias)   RMSNorm
MLP           GELU, ``fc``/``proj``   SwiGLU (gate, up, down)
biases        yes                     none
============  ======================  ===========================

(Grouped-query attention, ``num_kv_heads``, and tied embeddings are independent of the
style.) ``positions`` can override the style's position scheme, e.g. for a length
extrapolation experiment: ``"learned"``, ``"rope"``, ``"alibi"`` or ``"none"``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .alibi import alibi_bias
from .cache import KVCache, StaticKVCache
from .mlp import MLP, SwiGLU
from .multihead import MultiHeadAttention
from .norms import LayerNorm, RMSNorm

# style -> (position scheme, norm, default eps, MLP, biases)
STYLES = {
    "gpt2": dict(positions="learned", norm=LayerNorm, eps=1e-5, mlp="gelu", bias=True),
    "llama": dict(positions="rope", norm=RMSNorm, eps=1e-6, mlp="swiglu", bias=False),
}
POSITIONS = ("learned", "rope", "alibi", "none")


@dataclass
class GPTConfig:
    """Every hyperparameter of :class:`GPT`.

    ``num_kv_heads`` < ``num_heads`` gives grouped-query attention (``None``: as many as
    ``num_heads``). ``style`` picks GPT-2's or Llama's block (module docstring).
    ``tie_weights``: the output layer reuses the token embedding matrix. ``rope_base`` is
    RoPE's base (only used with RoPE); ``norm_eps`` defaults to the style's (1e-5 for
    LayerNorm as in GPT-2, 1e-6 for RMSNorm). ``positions`` overrides the style's
    position scheme. ``max_len`` bounds the sequence length with learned positions.
    With RoPE, ``rope_layout`` (``"half"``/``"interleaved"``), ``rope_scaling`` (``None``,
    ``"linear"``, ``"dynamic"``) and ``rope_factor`` are passed to :func:`mha.apply_rope`,
    with ``max_len`` as the trained length (transformers' ``max_position_embeddings``).
    """

    vocab_size: int
    max_len: int
    d_model: int
    num_heads: int
    num_layers: int
    d_ff: int
    num_kv_heads: int | None = None
    style: str = "gpt2"
    dropout: float = 0.0
    tie_weights: bool = True
    rope_base: float = 10000.0
    norm_eps: float | None = None
    positions: str | None = None
    rope_layout: str = "half"
    rope_scaling: str | None = None
    rope_factor: float = 1.0

    def __post_init__(self):
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {sorted(STYLES)}; got style={self.style!r}")
        if self.positions is None:
            self.positions = STYLES[self.style]["positions"]
        if self.positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}; got {self.positions!r}")
        if self.norm_eps is None:
            self.norm_eps = STYLES[self.style]["eps"]
        for name in ("vocab_size", "max_len", "d_model", "num_heads", "num_layers", "d_ff"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {name}={getattr(self, name)}")

    @classmethod
    def gpt2(cls, vocab_size: int, max_len: int, d_model: int, num_heads: int,
             num_layers: int, **kwargs) -> GPTConfig:
        """GPT-2's layout with its usual MLP width ``d_ff = 4 * d_model``."""
        return cls(vocab_size, max_len, d_model, num_heads, num_layers, 4 * d_model,
                   style="gpt2", **kwargs)

    @classmethod
    def llama(cls, vocab_size: int, max_len: int, d_model: int, num_heads: int,
              num_layers: int, **kwargs) -> GPTConfig:
        """Llama's layout; ``d_ff = 8/3 * d_model`` rounded up to a multiple of 32 gives
        SwiGLU's three matrices about the parameters of GPT-2's two at ``4 * d_model``."""
        d_ff = 32 * math.ceil(8 * d_model / 3 / 32)
        return cls(vocab_size, max_len, d_model, num_heads, num_layers, d_ff,
                   style="llama", **kwargs)


class Block(nn.Module):
    """One layer of :class:`GPT`, pre-norm: ``x + attn(norm1(x))``, then ``x + mlp(norm2(x))``.

    ``attn`` is causal :class:`mha.MultiHeadAttention`; ``norm1``/``norm2`` and ``mlp`` follow
    the config's style (GPT-2: LayerNorm and a GELU MLP; Llama: RMSNorm and SwiGLU). It
    computes what transformers' ``GPT2Block`` / ``LlamaDecoderLayer`` compute.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        style = STYLES[config.style]
        norm, eps, bias = style["norm"], config.norm_eps, style["bias"]
        rope_base = config.rope_base if config.positions == "rope" else None
        rope_options = dict(layout=config.rope_layout, scaling=config.rope_scaling,
                            factor=config.rope_factor, trained_len=config.max_len)
        self.norm1 = norm(config.d_model, eps=eps)
        self.attn = MultiHeadAttention(config.d_model, config.num_heads, config.dropout,
                                       bias=bias, num_kv_heads=config.num_kv_heads,
                                       rope_base=rope_base, rope_options=rope_options)
        self.norm2 = norm(config.d_model, eps=eps)
        if style["mlp"] == "gelu":
            self.mlp = MLP(config.d_model, config.d_ff, bias=bias)
        else:
            self.mlp = SwiGLU(config.d_model, config.d_ff)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask=None, attn_bias=None, cache=None, need_weights=False,
                positions=None, cache_position=None):
        """``x`` ``[B, T, D]`` -> ``([B, T, D], weights [B, H, T, S] | None)``.

        ``mask`` (boolean, ``True`` = may attend, broadcastable to ``[B, H, T, S]``) defaults
        to causal: the ``T`` new positions after the ``len(cache)`` cached ones each see the
        keys up to their own (``is_causal=True`` of :class:`mha.MultiHeadAttention`).
        ``positions`` (``[T]`` or ``[B, T]``) are used by RoPE only; ``cache_position``
        ``[T]`` writes into a :class:`mha.StaticKVCache` at those slots (a compiled step).
        """
        a, weights = self.attn(self.norm1(x), mask=mask, attn_bias=attn_bias, cache=cache,
                               need_weights=need_weights, positions=positions,
                               is_causal=mask is None, cache_position=cache_position)
        x = x + self.dropout(a)
        x = x + self.dropout(self.mlp(self.norm2(x)))
        return x, weights


class GPT(nn.Module):
    """Decoder-only language model: ``model(tokens [B, T]) -> logits [B, T, V]``.

    Incremental decoding: ``caches = model.new_caches()``, then ``model(prompt, caches)``
    (prefill) and ``model(next_token [B, 1], caches)`` per step; new tokens are placed
    after the cached ones (positions, causal mask, RoPE angles).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.tok_embed = nn.Embedding(config.vocab_size, config.d_model)
        self.pos_embed = (nn.Embedding(config.max_len, config.d_model)
                          if config.positions == "learned" else None)
        self.alibi = config.positions == "alibi"
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.num_layers))
        self.norm = STYLES[config.style]["norm"](config.d_model, eps=config.norm_eps)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        if config.tie_weights:
            self.lm_head.weight = self.tok_embed.weight  # one [V, D] matrix, read both ways

    def _init_weights(self, module: nn.Module) -> None:
        # GPT-2's initialisation: N(0, 0.02), zero biases, and the projections that write
        # into the residual stream scaled by 1/sqrt(2 * num_layers), so the stream's
        # variance does not grow with depth
        if isinstance(module, (nn.Linear, nn.Embedding)):
            std = 0.02
            if module in self._residual_projections():
                std /= math.sqrt(2 * self.config.num_layers)
            nn.init.normal_(module.weight, 0.0, std)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def _residual_projections(self) -> list[nn.Module]:
        return [m for b in self.blocks
                for m in (b.attn.o_proj, getattr(b.mlp, "proj", None), getattr(b.mlp, "down_proj", None))
                if m is not None]

    def new_caches(self, max_len: int | None = None) -> list[KVCache]:
        """One empty cache per block, for incremental decoding: a growing :class:`mha.KVCache`,
        or, given ``max_len`` (prompt + new tokens), a preallocated :class:`mha.StaticKVCache`."""
        return [KVCache() if max_len is None else StaticKVCache(max_len) for _ in self.blocks]

    def forward(self, tokens: torch.Tensor, caches: list[KVCache] | None = None,
                need_weights: bool = False, *, attention_mask: torch.Tensor | None = None,
                positions: torch.Tensor | None = None,
                cache_position: torch.Tensor | None = None):
        """Token ids ``[B, T]`` -> logits ``[B, T, V]`` (and per-block weights if asked).

        With ``caches`` from :meth:`new_caches`, ``tokens`` are the *new* tokens only.
        ``attention_mask`` ``[B, S]`` (1 = real token, 0 = padding; ``S`` counts the cached
        tokens and the new ones, as in transformers) hides padding from every query; with it
        ``positions`` default to each row's count of real tokens before the token (a
        left-padded row starts at 0 at its first real token). ``positions`` ``[T]`` or
        ``[B, T]`` can also be given; otherwise they are ``start .. start + T - 1``.

        ``cache_position`` ``[T]`` (with :class:`mha.StaticKVCache` caches, after the
        prompt's prefill) is the fixed-shape form of a decoding step, for a compiled step:
        the new tokens are at these slots of the caches' buffers, attention reads all
        ``S = max_len`` slots and a mask hides the ones after each query, and
        ``attention_mask``, if given, is ``[B, max_len]``. No Python number changes from
        one step to the next, so the compiler captures the step once. The caller checks
        that the positions fit (as :func:`mha.generate` does) and counts the tokens:
        ``len(cache)`` stays at the prefill's length.
        """
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be a 2-D tensor [B, T]; got shape {list(tokens.shape)}")
        B, T = tokens.shape
        if cache_position is None:
            start = len(caches[0]) if caches is not None else 0  # tokens already cached
            S = start + T
            slots = torch.arange(start, S, device=tokens.device)  # [T]: the new tokens' places
            what = f"the {start} cached tokens and the {T} new ones"
        else:
            self._check_cache_position(cache_position, caches, T)
            S, slots = caches[0].max_len, cache_position
            what = f"every slot of the caches' buffers, max_len={S}"
        if attention_mask is not None and tuple(attention_mask.shape) != (B, S):
            raise ValueError(
                f"attention_mask must be [B, S] = [{B}, {S}] ({what}); got shape "
                f"{list(attention_mask.shape)}")
        if positions is None:
            positions = self._positions(slots, attention_mask)
        x = self.tok_embed(tokens)  # [B, T, D]
        if self.pos_embed is not None:
            # (skipped for a compiled step: reading the maximum back would stop the capture)
            if cache_position is None and positions.max() >= self.config.max_len:
                raise ValueError(
                    f"positions {int(positions.min())}..{int(positions.max())} exceed "
                    f"max_len={self.config.max_len}: "
                    f"learned positions exist only for 0..{self.config.max_len - 1}")
            x = x + self.pos_embed(positions)  # [T, D] or [B, T, D]
        x = self.dropout(x)
        mask = None  # causal alone: each block's attention hides the future itself
        if attention_mask is not None or cache_position is not None:
            mask = self._mask(slots, S, attention_mask)  # [T, S] or [B, 1, T, S]
        bias = None
        if self.alibi:  # in the model's dtype: a float32 bias would promote bf16/fp16 scores
            bias = alibi_bias(self.config.num_heads, T, S, tokens.device).to(x.dtype)
        all_weights = []
        for i, block in enumerate(self.blocks):
            x, weights = block(x, mask, bias, caches[i] if caches is not None else None,
                               need_weights, positions, cache_position)
            all_weights.append(weights)
        logits = self.lm_head(self.norm(x))  # [B, T, V]
        return (logits, all_weights) if need_weights else logits

    def _check_cache_position(self, cache_position, caches, T) -> None:
        if caches is None or not all(isinstance(c, StaticKVCache) and c.filled for c in caches):
            raise ValueError("cache_position needs the StaticKVCache caches of new_caches(max_len), "
                             "filled by a prefill of the prompt first")
        if tuple(cache_position.shape) != (T,):
            raise ValueError(f"cache_position must be [T] = [{T}], one slot per new token; got "
                             f"shape {list(cache_position.shape)}")
        if self.alibi:
            raise ValueError("cache_position (a fixed-shape decoding step) does not support "
                             "ALiBi positions; decode without it")

    @staticmethod
    def _positions(slots, attention_mask) -> torch.Tensor:
        """Positions of the new tokens at ``slots`` ``[T]``: ``[T]``, or ``[B, T]`` from
        ``attention_mask``."""
        if attention_mask is None:
            return slots  # [T], shared by the batch
        # a token's position = how many real tokens precede it in its row; padding gets 0
        # (it is never attended to, so any valid position will do)
        counted = attention_mask.long().cumsum(dim=-1) - 1  # [B, S]
        return counted.clamp(min=0)[:, slots]  # [B, T]

    @staticmethod
    def _mask(slots, S, attention_mask) -> torch.Tensor:
        """Boolean ``[T, S]`` causal mask of the new queries at ``slots`` ``[T]`` (each sees
        the keys up to its own slot), or ``[B, 1, T, S]`` with the padding hidden too."""
        keys = torch.arange(S, device=slots.device)  # [S]
        mask = keys <= slots[:, None]  # [T, S]; equals causal_mask(T, S) for the last T slots
        if attention_mask is None:
            return mask
        real_keys = attention_mask.bool()[:, None, None, :]  # [B, 1, 1, S]
        # a padding query would see no key at all (0/0 in softmax); let every query see
        # itself, which changes nothing for real tokens (they see themselves anyway)
        itself = keys == slots[:, None]  # [T, S]
        return mask & (real_keys | itself)  # [B, 1, T, S]

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy of ``tokens`` ``[B, T]`` (nats per token).

        Position ``t`` predicts token ``t + 1``: inputs ``tokens[:, :-1]``, targets
        ``tokens[:, 1:]`` (the shifted targets). ``exp(loss)`` is the perplexity.
        """
        logits = self(tokens[:, :-1])  # [B, T-1, V]
        return F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())

    @classmethod
    def from_transformers(cls, hf_model) -> GPT:
        """Our model with the weights of a transformers ``GPT2LMHeadModel`` or
        ``LlamaForCausalLM`` (same logits, float32 atol 2e-4)."""
        model_type = hf_model.config.model_type
        if model_type == "gpt2":
            config, state = _from_gpt2(hf_model)
        elif model_type == "llama":
            config, state = _from_llama(hf_model)
        else:
            raise ValueError(f"from_transformers converts GPT-2 and Llama models; got "
                             f"model_type={model_type!r} ({type(hf_model).__name__})")
        model = cls(config)
        model.load_state_dict(state)  # strict: every name and shape must match
        return model.to(hf_model.dtype)


def _from_gpt2(hf_model) -> tuple[GPTConfig, dict]:
    c = hf_model.config
    for flag in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
        if getattr(c, flag, False):
            raise ValueError(f"GPT-2 config option {flag}=True is not supported")
    if c.activation_function != "gelu_new":
        raise ValueError(f"our GPT-2 MLP uses gelu_new (tanh); got {c.activation_function!r}")
    config = GPTConfig(c.vocab_size, c.n_positions, c.n_embd, c.n_head, c.n_layer,
                       c.n_inner or 4 * c.n_embd, style="gpt2",
                       tie_weights=c.tie_word_embeddings, norm_eps=c.layer_norm_epsilon)
    hf = hf_model.state_dict()
    D = c.n_embd
    state = {"tok_embed.weight": hf["transformer.wte.weight"],
             "pos_embed.weight": hf["transformer.wpe.weight"],
             "norm.weight": hf["transformer.ln_f.weight"],
             "norm.bias": hf["transformer.ln_f.bias"],
             "lm_head.weight": hf["lm_head.weight"]}
    for i in range(c.n_layer):
        h = f"transformer.h.{i}."
        # GPT-2's Conv1D stores weights [in, out] (x @ W); nn.Linear stores [out, in] (x @ W.T)
        q, k, v = hf[h + "attn.c_attn.weight"].t().split(D, dim=0)  # each [D, D]
        qb, kb, vb = hf[h + "attn.c_attn.bias"].split(D)
        ours = {"norm1": h + "ln_1", "norm2": h + "ln_2"}
        for name, theirs in ours.items():
            state[f"blocks.{i}.{name}.weight"] = hf[theirs + ".weight"]
            state[f"blocks.{i}.{name}.bias"] = hf[theirs + ".bias"]
        state.update({
            f"blocks.{i}.attn.q_proj.weight": q, f"blocks.{i}.attn.q_proj.bias": qb,
            f"blocks.{i}.attn.k_proj.weight": k, f"blocks.{i}.attn.k_proj.bias": kb,
            f"blocks.{i}.attn.v_proj.weight": v, f"blocks.{i}.attn.v_proj.bias": vb,
            f"blocks.{i}.attn.o_proj.weight": hf[h + "attn.c_proj.weight"].t(),
            f"blocks.{i}.attn.o_proj.bias": hf[h + "attn.c_proj.bias"],
            f"blocks.{i}.mlp.fc.weight": hf[h + "mlp.c_fc.weight"].t(),
            f"blocks.{i}.mlp.fc.bias": hf[h + "mlp.c_fc.bias"],
            f"blocks.{i}.mlp.proj.weight": hf[h + "mlp.c_proj.weight"].t(),
            f"blocks.{i}.mlp.proj.bias": hf[h + "mlp.c_proj.bias"],
        })
    return config, state


def _from_llama(hf_model) -> tuple[GPTConfig, dict]:
    c = hf_model.config
    rope = getattr(c, "rope_parameters", None) or {"rope_type": "default",
                                                   "rope_theta": getattr(c, "rope_theta", 10000.0)}
    rope_type = rope.get("rope_type", "default")
    if rope_type not in ("default", "linear", "dynamic"):
        raise ValueError(f"RoPE types default, linear and dynamic are supported; got "
                         f"rope_type={rope_type!r}")
    if getattr(c, "attention_bias", False) or getattr(c, "mlp_bias", False):
        raise ValueError("Llama with attention_bias or mlp_bias is not supported (ours has no biases)")
    if c.hidden_act != "silu":
        raise ValueError(f"our SwiGLU uses silu; got hidden_act={c.hidden_act!r}")
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    if head_dim * c.num_attention_heads != c.hidden_size:
        raise ValueError(f"head_dim={head_dim} must equal hidden_size / num_attention_heads")
    config = GPTConfig(c.vocab_size, c.max_position_embeddings, c.hidden_size,
                       c.num_attention_heads, c.num_hidden_layers, c.intermediate_size,
                       num_kv_heads=c.num_key_value_heads, style="llama",
                       tie_weights=c.tie_word_embeddings, rope_base=float(rope["rope_theta"]),
                       norm_eps=c.rms_norm_eps,
                       rope_scaling=None if rope_type == "default" else rope_type,
                       rope_factor=float(rope.get("factor", 1.0)))
    hf = hf_model.state_dict()
    state = {"tok_embed.weight": hf["model.embed_tokens.weight"],
             "norm.weight": hf["model.norm.weight"],
             "lm_head.weight": hf["lm_head.weight"]}
    for i in range(c.num_hidden_layers):
        h = f"model.layers.{i}."
        names = {"norm1": "input_layernorm", "norm2": "post_attention_layernorm",
                 **{f"attn.{p}": f"self_attn.{p}" for p in ("q_proj", "k_proj", "v_proj", "o_proj")},
                 **{f"mlp.{p}": f"mlp.{p}" for p in ("gate_proj", "up_proj", "down_proj")}}
        for ours, theirs in names.items():
            state[f"blocks.{i}.{ours}.weight"] = hf[h + theirs + ".weight"]
    return config, state
