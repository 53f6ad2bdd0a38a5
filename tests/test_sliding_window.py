"""Sliding-window masks and the rolling KV cache: hand-written examples, a sliding-window
Mistral from transformers (random weights, no download), and decoding through the rolling
cache against a full pass with the window mask.

Tolerances (float32): one layer atol 1e-5; whole-model logits atol 2e-4 (as tests/test_gpt.py);
greedy tokens exactly equal.
"""
import pytest
import torch
from transformers import MistralConfig, MistralForCausalLM

import mha
from swap_attention import Ours, greedy_with_our_caches, hf_greedy, swapped

LAYER = dict(atol=1e-5, rtol=0)
F32 = dict(atol=2e-4, rtol=0)
WINDOW = 4


def hf_mistral(window=WINDOW, seed=0):
    torch.manual_seed(seed)
    config = MistralConfig(vocab_size=60, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                           num_attention_heads=4, num_key_value_heads=2, sliding_window=window,
                           max_position_embeddings=64, initializer_range=0.2, attn_implementation="eager",
                           rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                           bos_token_id=0, eos_token_id=None)
    model = MistralForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


def ours_from_mistral(i, theirs):
    c = theirs.config
    ours = mha.MultiHeadAttention(c.hidden_size, c.num_attention_heads, bias=False,
                                  num_kv_heads=c.num_key_value_heads,
                                  rope_base=c.rope_parameters["rope_theta"])
    ours.load_state_dict(theirs.state_dict())
    return Ours(ours, window=c.sliding_window)


def test_a_window_of_three_keeps_each_query_and_the_two_keys_before_it():
    expected = torch.tensor([[1, 0, 0, 0, 0],
                             [1, 1, 0, 0, 0],
                             [1, 1, 1, 0, 0],
                             [0, 1, 1, 1, 0],
                             [0, 0, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(mha.sliding_window_mask(5, 3), expected)


def test_the_last_queries_of_a_longer_sequence_get_the_bottom_rows():
    assert torch.equal(mha.sliding_window_mask(2, 3, S=5), mha.sliding_window_mask(5, 3)[3:])


def test_a_window_as_long_as_the_sequence_is_the_causal_mask():
    assert torch.equal(mha.sliding_window_mask(6, 6), mha.causal_mask(6))
    assert torch.equal(mha.sliding_window_mask(4, 100, S=6), mha.causal_mask(4, 6))


def test_keep_first_adds_the_first_tokens_to_every_window():
    expected = torch.tensor([[1, 0, 0, 0, 0, 0],
                             [1, 1, 0, 0, 0, 0],
                             [1, 1, 1, 0, 0, 0],
                             [1, 0, 1, 1, 0, 0],
                             [1, 0, 0, 1, 1, 0],
                             [1, 0, 0, 0, 1, 1]], dtype=torch.bool)
    assert torch.equal(mha.sliding_window_mask(6, 2, keep_first=1), expected)


@pytest.mark.parametrize("window, keep_first", [(0, 0), (2.5, 0), (3, -1)])
def test_a_window_that_is_not_a_positive_integer_is_rejected(window, keep_first):
    with pytest.raises(ValueError, match="window must be a positive integer|keep_first must be"):
        mha.sliding_window_mask(5, window, keep_first=keep_first)


@pytest.mark.parametrize("num_layers", [1, 2, 3])
def test_the_receptive_field_grows_by_window_minus_one_per_layer(num_layers):
    # reachability through stacked layers: the boolean matrix power of the mask
    mask = mha.sliding_window_mask(20, WINDOW).long()
    reach = torch.linalg.matrix_power(mask, num_layers) > 0  # [20, 20]
    for p in range(20):
        earliest = int(reach[p].nonzero().min())
        assert earliest == mha.receptive_field(num_layers, WINDOW, p)


def test_one_mistral_layer_with_a_window_equals_transformers():
    hf = hf_mistral()
    theirs = hf.model.layers[1].self_attn
    ours = ours_from_mistral(1, theirs).ours
    x = torch.randn(2, 11, 32, generator=torch.Generator().manual_seed(3))
    positions = torch.arange(11)
    cos_sin = hf.model.rotary_emb(x, positions[None].expand(2, -1))
    mask = mha.sliding_window_mask(11, WINDOW)
    additive = torch.zeros(11, 11).masked_fill(~mask, float("-inf"))[None, None]
    expected, _ = theirs(x, position_embeddings=cos_sin, attention_mask=additive)
    torch.testing.assert_close(ours(x, mask=mask)[0], expected, **LAYER)


def test_the_whole_sliding_window_mistral_with_our_window_mask_gives_the_same_logits():
    hf = hf_mistral()
    tokens = torch.randint(0, 60, (2, 15), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = hf(tokens).logits
        torch.testing.assert_close(swapped(hf, ours_from_mistral)(tokens).logits, expected, **F32)
        # and the window matters: plain causal attention gives other logits
        causal = swapped(hf, lambda i, theirs: Ours(ours_from_mistral(i, theirs).ours))
        assert (causal(tokens).logits - expected).abs().max() > 1e-2


def test_greedy_tokens_through_our_rolling_caches_equal_transformers_generate():
    hf = hf_mistral()
    prompt = torch.randint(0, 60, (2, 7), generator=torch.Generator().manual_seed(1))
    ours = swapped(hf, ours_from_mistral)
    tokens = greedy_with_our_caches(ours, prompt, 12, lambda i: mha.RollingKVCache(WINDOW))
    assert torch.equal(tokens, hf_greedy(hf, prompt, 12))


@pytest.mark.parametrize("keep_first", [0, 2])
@pytest.mark.parametrize("prefill", [1, 3, 9], ids=["prefill-1", "prefill-short", "prefill-long"])
def test_decoding_through_the_rolling_cache_equals_the_full_pass_with_the_window_mask(
        prefill, keep_first):
    torch.manual_seed(0)
    attn = mha.MultiHeadAttention(32, 4, num_kv_heads=2, rope_base=100.0).eval()
    x = torch.randn(2, 16, 32)
    full, _ = attn(x, mask=mha.sliding_window_mask(16, WINDOW, keep_first=keep_first))
    cache = mha.RollingKVCache(WINDOW, keep_first=keep_first)
    steps = [attn(x[:, :prefill], mask=cache.mask(prefill), cache=cache)[0]]
    for t in range(prefill, 16):
        steps.append(attn(x[:, t:t + 1], mask=cache.mask(1), cache=cache)[0])
        assert cache.stored <= WINDOW - 1 + keep_first  # the memory never grows
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **LAYER)


def test_the_rolling_cache_keeps_the_last_window_minus_one_positions_and_the_first_ones():
    cache = mha.RollingKVCache(3, keep_first=1)
    for _ in range(6):
        cache.update(torch.zeros(1, 1, 1, 2), torch.zeros(1, 1, 1, 2))
    assert len(cache) == 6  # tokens seen: the next token's position
    assert cache.positions.tolist() == [0, 4, 5]  # the sink, then what position 6 can see
    assert cache.key.shape == (1, 1, 3, 2)
