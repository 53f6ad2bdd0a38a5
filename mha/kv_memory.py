"""How many bytes the KV cache needs per token, for MHA, GQA, MQA and MLA.

While generating, every layer keeps something for every token seen:

- multi-head attention (MHA), grouped-query (GQA) and multi-query (MQA): a key and a value
  per key/value head, ``2 * num_kv_heads * head_dim`` numbers per layer (MHA has
  ``num_kv_heads = num_heads``, MQA has 1);
- multi-head latent attention (MLA): the latent and the shared RoPE key,
  ``kv_lora_rank + qk_rope_head_dim`` numbers per layer, whatever the number of heads.

A sliding-window layer keeps only the last ``window`` tokens, so its share stops growing.

The published configurations below are quoted from each model's ``config.json`` on the
Hugging Face hub (the URL is in ``source``); nothing is downloaded. ``dtype_bytes`` is 2
for the bfloat16 caches these models run with.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AttentionConfig:
    """The numbers of a model that decide its KV cache.

    ``num_kv_heads``/``head_dim`` describe MHA/GQA/MQA; an MLA model gives ``kv_lora_rank``
    and ``qk_rope_head_dim`` instead. ``window`` is the sliding window of the layers listed in
    ``sliding_layers`` (how many of ``num_layers`` use it); the others see every token.
    """

    name: str
    num_layers: int
    num_heads: int
    num_kv_heads: int | None = None
    head_dim: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    window: int | None = None
    sliding_layers: int = 0
    dtype_bytes: int = 2
    source: str = ""
    notes: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if self.kv_lora_rank is not None:
            return "MLA"
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"


def kv_cache_bytes_per_token(num_layers: int, num_kv_heads: int | None = None,
                             head_dim: int | None = None, *, kv_lora_rank: int | None = None,
                             qk_rope_head_dim: int | None = None, dtype_bytes: int = 2) -> int:
    """Bytes of KV cache one token costs across all layers.

    MHA/GQA/MQA (give ``num_kv_heads`` and ``head_dim``):
    ``num_layers * 2 * num_kv_heads * head_dim * dtype_bytes`` (a key and a value).
    MLA (give ``kv_lora_rank`` and ``qk_rope_head_dim``):
    ``num_layers * (kv_lora_rank + qk_rope_head_dim) * dtype_bytes``.
    """
    if not isinstance(num_layers, int) or num_layers < 1:
        raise ValueError(f"num_layers must be a positive integer; got {num_layers!r}")
    if not isinstance(dtype_bytes, int) or dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be a positive integer (2 for bfloat16); "
                         f"got {dtype_bytes!r}")
    latent = kv_lora_rank is not None or qk_rope_head_dim is not None
    heads = num_kv_heads is not None or head_dim is not None
    if latent == heads:
        raise ValueError("give either num_kv_heads and head_dim (MHA, GQA, MQA) or "
                         "kv_lora_rank and qk_rope_head_dim (MLA), not both and not neither")
    if latent:
        if kv_lora_rank is None or qk_rope_head_dim is None:
            raise ValueError(f"MLA needs both kv_lora_rank and qk_rope_head_dim; got "
                             f"kv_lora_rank={kv_lora_rank}, qk_rope_head_dim={qk_rope_head_dim}")
        return num_layers * (kv_lora_rank + qk_rope_head_dim) * dtype_bytes
    if num_kv_heads is None or head_dim is None:
        raise ValueError(f"MHA/GQA/MQA needs both num_kv_heads and head_dim; got "
                         f"num_kv_heads={num_kv_heads}, head_dim={head_dim}")
    return num_layers * 2 * num_kv_heads * head_dim * dtype_bytes


def config_bytes_per_token(config: AttentionConfig) -> int:
    """:func:`kv_cache_bytes_per_token` of a config, counting every layer (no window)."""
    if config.kind == "MLA":
        return kv_cache_bytes_per_token(config.num_layers, kv_lora_rank=config.kv_lora_rank,
                                        qk_rope_head_dim=config.qk_rope_head_dim,
                                        dtype_bytes=config.dtype_bytes)
    return kv_cache_bytes_per_token(config.num_layers, config.num_kv_heads, config.head_dim,
                                    dtype_bytes=config.dtype_bytes)


def kv_cache_bytes(config: AttentionConfig, num_tokens: int, batch_size: int = 1) -> int:
    """The whole cache after ``num_tokens`` tokens: sliding-window layers hold at most
    ``window`` tokens, the others all of them."""
    per_layer = config_bytes_per_token(config) // config.num_layers
    full = config.num_layers - config.sliding_layers
    held = 0 if config.window is None else min(num_tokens, config.window)
    return batch_size * per_layer * (full * num_tokens + config.sliding_layers * held)


HF = "https://huggingface.co/{}/blob/main/config.json"

# Quoted from config.json (fields: num_hidden_layers, num_attention_heads, num_key_value_heads,
# head_dim or hidden_size / num_attention_heads, kv_lora_rank, qk_rope_head_dim,
# sliding_window, layer_types).
PUBLISHED_CONFIGS = {
    "Llama 3 8B": AttentionConfig(
        "Llama 3 8B", num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128,  # 4096 / 32
        source=HF.format("meta-llama/Meta-Llama-3-8B")),
    "Mistral 7B": AttentionConfig(
        "Mistral 7B", num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128,  # 4096 / 32
        window=4096, sliding_layers=32, source=HF.format("mistralai/Mistral-7B-v0.1")),
    "DeepSeek-V3": AttentionConfig(
        "DeepSeek-V3", num_layers=61, num_heads=128, kv_lora_rank=512, qk_rope_head_dim=64,
        source=HF.format("deepseek-ai/DeepSeek-V3"),
        notes={"num_key_value_heads": 128, "qk_nope_head_dim": 128, "v_head_dim": 128,
               "q_lora_rank": 1536, "hidden_size": 7168}),
    "gpt-oss-120b": AttentionConfig(
        "gpt-oss-120b", num_layers=36, num_heads=64, num_kv_heads=8, head_dim=64,
        window=128, sliding_layers=18,  # layer_types alternate sliding and full attention
        source=HF.format("openai/gpt-oss-120b")),
}


def mla_as_mha_bytes_per_token(config: AttentionConfig) -> int:
    """What an MLA model's cache would cost if it cached every head's full key
    (``qk_nope_head_dim + qk_rope_head_dim``) and value (``v_head_dim``), as MHA does."""
    n = config.notes
    per_layer = n["num_key_value_heads"] * (n["qk_nope_head_dim"] + config.qk_rope_head_dim
                                             + n["v_head_dim"])
    return config.num_layers * per_layer * config.dtype_bytes
