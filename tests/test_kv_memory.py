"""KV-cache bytes per token: hand-computed numbers, the quoted configs against transformers'
own defaults (which are those published models), and the bytes of real caches."""
import pytest
import torch
from transformers import DeepseekV3Config, GptOssConfig, MistralConfig

import mha
from mha.kv_memory import config_bytes_per_token, mla_as_mha_bytes_per_token


@pytest.mark.parametrize("name, expected", [
    ("Llama 3 8B", 32 * 2 * 8 * 128 * 2),       # 131072: GQA, 8 key/value heads of 128
    ("Mistral 7B", 32 * 2 * 8 * 128 * 2),       # 131072: the same attention shape
    ("DeepSeek-V3", 61 * (512 + 64) * 2),       # 70272: MLA, latent 512 + RoPE key 64
    ("gpt-oss-120b", 36 * 2 * 8 * 64 * 2),      # 73728: GQA, 8 key/value heads of 64
])
def test_bytes_per_token_of_the_published_configs_match_hand_computation(name, expected):
    assert config_bytes_per_token(mha.PUBLISHED_CONFIGS[name]) == expected


def test_mha_gqa_and_mqa_differ_only_by_the_number_of_key_value_heads():
    # 32 layers of head_dim 128 in bfloat16: 2 * 128 * 2 = 512 bytes per head per layer
    assert mha.kv_cache_bytes_per_token(32, 32, 128) == 32 * 32 * 512  # MHA: 512 KiB
    assert mha.kv_cache_bytes_per_token(32, 8, 128) == 32 * 8 * 512  # GQA
    assert mha.kv_cache_bytes_per_token(32, 1, 128) == 32 * 1 * 512  # MQA
    assert mha.kv_cache_bytes_per_token(32, 1, 128, dtype_bytes=4) == 32 * 1024  # float32


def test_deepseek_v3_would_cache_71_times_more_as_plain_multi_head_attention():
    config = mha.PUBLISHED_CONFIGS["DeepSeek-V3"]
    as_mha = 61 * 128 * (128 + 64 + 128) * 2  # every head's key (nope + rope) and value
    assert mla_as_mha_bytes_per_token(config) == as_mha == 4_997_120
    assert as_mha // config_bytes_per_token(config) == 71


def test_sliding_window_layers_stop_growing_at_the_window():
    gpt_oss = mha.PUBLISHED_CONFIGS["gpt-oss-120b"]
    per_layer = 2 * 8 * 64 * 2  # 2048 bytes per token per layer
    assert mha.kv_cache_bytes(gpt_oss, 100) == 36 * 100 * per_layer  # all below the window
    assert mha.kv_cache_bytes(gpt_oss, 1000) == (18 * 1000 + 18 * 128) * per_layer
    assert mha.kv_cache_bytes(gpt_oss, 1000, batch_size=3) == 3 * mha.kv_cache_bytes(gpt_oss, 1000)
    llama = mha.PUBLISHED_CONFIGS["Llama 3 8B"]
    assert mha.kv_cache_bytes(llama, 8192) == 8192 * config_bytes_per_token(llama)


def test_the_quoted_configs_equal_the_defaults_of_transformers_configs():
    # transformers' DeepseekV3Config, GptOssConfig and MistralConfig default to those models
    ds, oss, mistral = DeepseekV3Config(), GptOssConfig(), MistralConfig()
    quoted = mha.PUBLISHED_CONFIGS
    assert (quoted["DeepSeek-V3"].num_layers, quoted["DeepSeek-V3"].num_heads,
            quoted["DeepSeek-V3"].kv_lora_rank, quoted["DeepSeek-V3"].qk_rope_head_dim) == \
        (ds.num_hidden_layers, ds.num_attention_heads, ds.kv_lora_rank, ds.qk_rope_head_dim)
    assert quoted["DeepSeek-V3"].notes == {
        "num_key_value_heads": ds.num_key_value_heads, "qk_nope_head_dim": ds.qk_nope_head_dim,
        "v_head_dim": ds.v_head_dim, "q_lora_rank": ds.q_lora_rank, "hidden_size": ds.hidden_size}
    g = quoted["gpt-oss-120b"]
    assert (g.num_layers, g.num_heads, g.num_kv_heads, g.head_dim, g.window, g.sliding_layers) == \
        (oss.num_hidden_layers, oss.num_attention_heads, oss.num_key_value_heads, oss.head_dim,
         oss.sliding_window, oss.layer_types.count("sliding_attention"))
    m = quoted["Mistral 7B"]
    assert (m.num_layers, m.num_heads, m.num_kv_heads, m.head_dim, m.window) == \
        (mistral.num_hidden_layers, mistral.num_attention_heads, mistral.num_key_value_heads,
         mistral.head_dim, mistral.sliding_window)


def test_every_quoted_config_cites_its_config_json_on_the_hub():
    for config in mha.PUBLISHED_CONFIGS.values():
        assert config.source.startswith("https://huggingface.co/")
        assert config.source.endswith("/config.json")


def test_the_kinds_are_named_from_the_numbers():
    kinds = {name: c.kind for name, c in mha.PUBLISHED_CONFIGS.items()}
    assert kinds == {"Llama 3 8B": "GQA", "Mistral 7B": "GQA", "DeepSeek-V3": "MLA",
                     "gpt-oss-120b": "GQA"}
    assert mha.AttentionConfig("x", 2, 4, num_kv_heads=4, head_dim=8).kind == "MHA"
    assert mha.AttentionConfig("x", 2, 4, num_kv_heads=1, head_dim=8).kind == "MQA"


def cache_bytes(cache) -> int:
    return sum(t.numel() * t.element_size() for t in (cache.key, cache.value))


def test_the_formula_counts_the_bytes_of_a_real_gqa_cache():
    attn = mha.MultiHeadAttention(32, 4, num_kv_heads=2)
    cache = mha.KVCache()
    attn(torch.zeros(1, 7, 32), mask=mha.causal_mask(7), cache=cache)
    assert cache_bytes(cache) == 7 * mha.kv_cache_bytes_per_token(1, 2, 8, dtype_bytes=4)


def test_the_formula_counts_the_bytes_of_a_real_latent_cache():
    attn = mha.MultiHeadLatentAttention(32, 4, kv_lora_rank=16, qk_nope_head_dim=12,
                                        qk_rope_head_dim=8, v_head_dim=10)
    cache = mha.KVCache()
    attn(torch.zeros(1, 7, 32), mask=mha.causal_mask(7), cache=cache, absorbed=True)
    assert cache_bytes(cache) == 7 * mha.kv_cache_bytes_per_token(
        1, kv_lora_rank=16, qk_rope_head_dim=8, dtype_bytes=4)


@pytest.mark.parametrize("kwargs", [
    dict(num_layers=2),  # neither kind of attention
    dict(num_layers=2, num_kv_heads=2, head_dim=8, kv_lora_rank=16, qk_rope_head_dim=8),
    dict(num_layers=2, kv_lora_rank=16),  # MLA without its RoPE key
    dict(num_layers=2, num_kv_heads=2),  # GQA without head_dim
    dict(num_layers=0, num_kv_heads=2, head_dim=8),
])
def test_an_incomplete_or_mixed_description_is_rejected(kwargs):
    with pytest.raises(ValueError):
        mha.kv_cache_bytes_per_token(**kwargs)
