"""Learned attention sinks against transformers' gpt-oss (random weights, no download):
its attention function, one layer of each kind (sliding, full), the whole model's logits and
its greedy tokens; and a hand-computed example.

Tolerances (float32): one layer atol 1e-5; whole-model logits atol 2e-4 (as tests/test_gpt.py);
greedy tokens exactly equal.
"""
import math
from types import SimpleNamespace

import pytest
import torch
from transformers import GptOssConfig, GptOssForCausalLM
from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

import mha
from swap_attention import Ours, greedy_with_our_caches, hf_greedy, swapped

LAYER = dict(atol=1e-5, rtol=0)
F32 = dict(atol=2e-4, rtol=0)
WINDOW = 4


def hf_gpt_oss(seed=0):
    torch.manual_seed(seed)
    config = GptOssConfig(vocab_size=60, hidden_size=32, intermediate_size=32, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                          sliding_window=WINDOW, num_local_experts=4, num_experts_per_tok=2,
                          rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                          max_position_embeddings=64, initializer_range=0.2, attn_implementation="eager",
                          bos_token_id=0, eos_token_id=None, pad_token_id=0)
    model = GptOssForCausalLM(config).eval()
    assert config.layer_types == ["sliding_attention", "full_attention"]
    with torch.no_grad():  # sinks start at zero-ish and norms at one: make them matter
        for name, p in model.named_parameters():
            if "sinks" in name:
                p.normal_(0.0, 2.0)
            elif "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


def ours_from_gpt_oss(i, theirs):
    window = WINDOW if theirs.config.layer_types[i] == "sliding_attention" else None
    return Ours(mha.SinkAttention.from_transformers(theirs), window=window)


def test_attention_with_sinks_equals_transformers_gpt_oss_attention_function():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 6, 8, generator=g) for _ in range(3))
    sinks = torch.randn(4, generator=g)
    mask = mha.sliding_window_mask(6, 3)
    module = SimpleNamespace(sinks=sinks, num_key_value_groups=1, training=False)
    additive = torch.zeros(6, 6).masked_fill(~mask, float("-inf"))[None, None]
    expected, expected_weights = eager_attention_forward(module, q, k, v, additive,
                                                         scaling=8 ** -0.5)
    out, weights = mha.attention_with_sinks(q, k, v, sinks, mask)
    torch.testing.assert_close(out.transpose(1, 2), expected, **LAYER)  # theirs: [B, L, H, d]
    torch.testing.assert_close(weights, expected_weights, **LAYER)


def test_a_sink_takes_its_share_of_the_weight_and_adds_nothing():
    # all scores 0 (q = 0): each of the S keys gets e^0, the sink e^s, out of S + e^s
    S, s = 5, math.log(3.0)
    q = torch.zeros(1, 1, 1, 4)
    k = torch.randn(1, 1, S, 4)
    v = torch.ones(1, 1, S, 2)
    out, weights = mha.attention_with_sinks(q, k, v, torch.tensor([s]))
    torch.testing.assert_close(weights, torch.full((1, 1, 1, S), 1 / (S + 3.0)))
    torch.testing.assert_close(out, torch.full((1, 1, 1, 2), S / (S + 3.0)))  # not 1: no value


def test_a_very_negative_sink_gives_ordinary_attention():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g) for _ in range(3))
    mask = mha.causal_mask(5)
    out, weights = mha.attention_with_sinks(q, k, v, torch.full((3,), -1e4), mask)
    expected, expected_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, expected_weights)


def test_sinks_of_the_wrong_shape_are_rejected():
    q = torch.zeros(1, 3, 2, 4)
    with pytest.raises(ValueError, match=r"one logit per head, shape \[3\]"):
        mha.attention_with_sinks(q, q, q, torch.zeros(4))


@pytest.mark.parametrize("layer", [0, 1], ids=["sliding", "full"])
def test_one_gpt_oss_layer_equals_transformers(layer):
    hf = hf_gpt_oss()
    theirs = hf.model.layers[layer].self_attn
    ours = mha.SinkAttention.from_transformers(theirs)
    x = torch.randn(2, 9, 32, generator=torch.Generator().manual_seed(3))
    cos_sin = hf.model.rotary_emb(x, torch.arange(9)[None].expand(2, -1))
    mask = mha.sliding_window_mask(9, WINDOW) if layer == 0 else mha.causal_mask(9)
    additive = torch.zeros(9, 9).masked_fill(~mask, float("-inf"))[None, None]
    expected, expected_weights = theirs(x, position_embeddings=cos_sin, attention_mask=additive)
    out, weights = ours(x, mask=mask)
    torch.testing.assert_close(out, expected, **LAYER)
    torch.testing.assert_close(weights, expected_weights, **LAYER)


def test_the_whole_gpt_oss_model_with_our_sinks_and_windows_gives_the_same_logits():
    hf = hf_gpt_oss()
    tokens = torch.randint(0, 60, (2, 13), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(swapped(hf, ours_from_gpt_oss)(tokens).logits,
                                   hf(tokens).logits, **F32)


def test_greedy_tokens_through_our_caches_equal_transformers_generate():
    hf = hf_gpt_oss()
    prompt = torch.randint(0, 60, (2, 6), generator=torch.Generator().manual_seed(1))
    # gpt-oss alternates: a rolling cache for the sliding layer, a growing one for the full
    caches = lambda i: mha.RollingKVCache(WINDOW) if i == 0 else mha.KVCache()  # noqa: E731
    tokens = greedy_with_our_caches(swapped(hf, ours_from_gpt_oss), prompt, 10, caches)
    assert torch.equal(tokens, hf_greedy(hf, prompt, 10))


def test_a_model_whose_heads_do_not_fill_its_width_is_rejected():
    hf = hf_gpt_oss()
    theirs = hf.model.layers[0].self_attn
    theirs.config.hidden_size = 40
    with pytest.raises(ValueError, match="hidden_size must equal num_heads \\* head_dim"):
        mha.SinkAttention.from_transformers(theirs)
