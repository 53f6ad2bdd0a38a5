"""mha.MultiHeadLatentAttention against transformers' DeepseekV3Attention (random weights, no
download), the absorbed form against the plain one, and the latent cache.

Tolerances (float32): one layer atol 1e-5; whole-model logits atol 2e-4 (as tests/test_gpt.py);
greedy tokens exactly equal.
"""
import pytest
import torch
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

import mha
from swap_attention import Ours, greedy_with_our_caches, hf_greedy, swapped

LAYER = dict(atol=1e-5, rtol=0)
F32 = dict(atol=2e-4, rtol=0)
D = 32


def hf_deepseek(q_lora_rank=None, interleave=True, seed=0):
    torch.manual_seed(seed)
    config = DeepseekV3Config(
        vocab_size=60, hidden_size=D, intermediate_size=48, moe_intermediate_size=16,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=16,
        q_lora_rank=q_lora_rank, qk_rope_head_dim=8, qk_nope_head_dim=12, v_head_dim=10,
        first_k_dense_replace=1, n_routed_experts=4, num_experts_per_tok=2, n_group=1,
        topk_group=1, rope_interleave=interleave, max_position_embeddings=64, initializer_range=0.2,
        rope_parameters={"rope_type": "default", "rope_theta": 100.0},
        attn_implementation="eager", bos_token_id=0, eos_token_id=None)
    model = DeepseekV3ForCausalLM(config).eval()
    with torch.no_grad():  # transformers initialises the norms to ones: make them matter
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


def x_(L=9, B=2, seed=3):
    return torch.randn(B, L, D, generator=torch.Generator().manual_seed(seed))


def additive(mask):
    """transformers' form of a boolean mask: 0 where allowed, -inf elsewhere, [1, 1, L, S]."""
    return torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))[None, None]


@pytest.mark.parametrize("interleave", [True, False], ids=["interleaved", "half"])
@pytest.mark.parametrize("q_lora_rank", [None, 24], ids=["q_proj", "q_lora"])
def test_one_mla_layer_equals_transformers_deepseek_v3_attention(q_lora_rank, interleave):
    hf = hf_deepseek(q_lora_rank, interleave)
    theirs = hf.model.layers[1].self_attn
    ours = mha.MultiHeadLatentAttention.from_transformers(theirs)
    x = x_()
    # a jump of 5 positions in the middle: RoPE sees differences of positions
    positions = torch.arange(9) + 5 * (torch.arange(9) >= 4)
    cos_sin = hf.model.rotary_emb(x, positions[None].expand(2, -1))
    expected, _ = theirs(x, position_embeddings=cos_sin, attention_mask=additive(mha.causal_mask(9)))
    out, _ = ours(x, mask=mha.causal_mask(9), positions=positions)
    torch.testing.assert_close(out, expected, **LAYER)


@pytest.mark.parametrize("q_lora_rank", [None, 24], ids=["q_proj", "q_lora"])
def test_absorbed_mla_equals_plain_mla(q_lora_rank):
    ours = mha.MultiHeadLatentAttention.from_transformers(hf_deepseek(q_lora_rank).model.layers[0].self_attn)
    x, mask = x_(), mha.causal_mask(9)
    plain, plain_weights = ours(x, mask=mask)
    absorbed, absorbed_weights = ours(x, mask=mask, absorbed=True)
    torch.testing.assert_close(absorbed, plain, **LAYER)
    torch.testing.assert_close(absorbed_weights, plain_weights, **LAYER)


@pytest.mark.parametrize("absorbed", [False, True], ids=["plain", "absorbed"])
def test_prefill_then_decode_with_the_latent_cache_equals_the_full_pass(absorbed):
    ours = mha.MultiHeadLatentAttention.from_transformers(hf_deepseek().model.layers[0].self_attn)
    x = x_(12)
    full, _ = ours(x, mask=mha.causal_mask(12))
    cache = mha.KVCache()
    steps = [ours(x[:, :5], mask=mha.causal_mask(5), cache=cache, absorbed=absorbed)[0]]
    for t in range(5, 12):
        steps.append(ours(x[:, t:t + 1], mask=mha.causal_mask(1, t + 1), cache=cache,
                          absorbed=absorbed)[0])
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **LAYER)


def test_the_latent_cache_holds_one_latent_and_one_shared_rope_key_per_token():
    ours = mha.MultiHeadLatentAttention(D, 4, kv_lora_rank=16, qk_nope_head_dim=12,
                                        qk_rope_head_dim=8, v_head_dim=10)
    cache = mha.KVCache()
    ours(x_(7), mask=mha.causal_mask(7), cache=cache, absorbed=True)
    assert cache.key.shape == (2, 1, 7, 16)  # the latent: no head axis to speak of
    assert cache.value.shape == (2, 1, 7, 8)  # the rotated RoPE key, shared by the 4 heads


def test_the_whole_deepseek_v3_model_with_our_mla_gives_the_same_logits():
    hf = hf_deepseek(q_lora_rank=24)
    ours = swapped(hf, lambda i, theirs: Ours(mha.MultiHeadLatentAttention.from_transformers(theirs),
                                              absorbed=True))
    tokens = torch.randint(0, 60, (2, 13), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(ours(tokens).logits, hf(tokens).logits, **F32)


@pytest.mark.parametrize("absorbed", [False, True], ids=["plain", "absorbed"])
def test_greedy_tokens_with_our_latent_cache_equal_transformers_generate(absorbed):
    hf = hf_deepseek(q_lora_rank=24)
    ours = swapped(hf, lambda i, theirs: Ours(mha.MultiHeadLatentAttention.from_transformers(theirs),
                                              absorbed=absorbed))
    prompt = torch.randint(0, 60, (2, 6), generator=torch.Generator().manual_seed(1))
    expected = hf_greedy(hf, prompt, 10)
    assert torch.equal(greedy_with_our_caches(ours, prompt, 10, lambda i: mha.KVCache()), expected)


def test_rope_is_applied_to_the_rope_part_only():
    # shifting every position by the same amount changes no score (RoPE is relative), but
    # the queries and keys of the content part must not move at all
    ours = mha.MultiHeadLatentAttention(D, 4, 16, 12, 8, 10)
    x = x_()
    q_nope, q_rope = ours.queries(x, torch.arange(9))
    q_nope_later, q_rope_later = ours.queries(x, torch.arange(9) + 7)
    torch.testing.assert_close(q_nope_later, q_nope)
    assert not torch.allclose(q_rope_later, q_rope)
    torch.testing.assert_close(ours(x, positions=torch.arange(9) + 7)[0],
                               ours(x, positions=torch.arange(9))[0], **LAYER)


@pytest.mark.parametrize("kwargs, message", [
    (dict(qk_rope_head_dim=7), "even"),
    (dict(kv_lora_rank=0), "kv_lora_rank must be a positive integer"),
    (dict(q_lora_rank=-1), "q_lora_rank must be None or a positive integer"),
])
def test_impossible_sizes_are_rejected_with_a_clear_message(kwargs, message):
    sizes = dict(d_model=D, num_heads=4, kv_lora_rank=16, qk_nope_head_dim=12,
                 qk_rope_head_dim=8, v_head_dim=10) | kwargs
    with pytest.raises(ValueError, match=message):
        mha.MultiHeadLatentAttention(**sizes)


def test_an_input_of_the_wrong_width_is_rejected():
    ours = mha.MultiHeadLatentAttention(D, 4, 16, 12, 8, 10)
    with pytest.raises(ValueError, match="built with d_model=32"):
        ours(torch.zeros(1, 3, 31))
