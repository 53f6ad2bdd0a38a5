"""mha.GPT against transformers' GPT-2 and Llama (converted weights), and its own specs."""
import math
from types import SimpleNamespace

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

import mha
from mha import GPT, GPTConfig

F32 = dict(atol=2e-4, rtol=0)  # the tolerance for float32 logits
TOKENS = torch.randint(0, 60, (3, 17), generator=torch.Generator().manual_seed(0))


def hf_gpt2(tie=True, seed=0):
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=60, n_positions=32, n_embd=48, n_layer=3, n_head=4,
                        tie_word_embeddings=tie, bos_token_id=0, eos_token_id=1)
    return GPT2LMHeadModel(config).eval()


def hf_llama(num_kv_heads, tie, seed=0, theta=500.0, eps=1e-5):
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=60, hidden_size=48, intermediate_size=80, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=num_kv_heads,
                         max_position_embeddings=64, tie_word_embeddings=tie, rms_norm_eps=eps,
                         rope_parameters={"rope_type": "default", "rope_theta": theta},
                         bos_token_id=0, eos_token_id=1)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # transformers initialises the norms to ones: make them matter
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


def small(style="gpt2", **kwargs):
    torch.manual_seed(0)
    return GPT(GPTConfig(60, 32, 48, 4, 2, 96, style=style, **kwargs)).eval()


@pytest.mark.parametrize("tie", [True, False])
def test_converted_gpt2_gives_the_same_logits(tie):
    hf = hf_gpt2(tie)
    with torch.no_grad():  # untrained LayerNorms are ones/zeros: make them matter
        for name, p in hf.named_parameters():
            if ".ln_" in name:
                p.uniform_(0.5, 1.5)
    ours = GPT.from_transformers(hf)
    torch.testing.assert_close(ours(TOKENS), hf(TOKENS).logits, **F32)


@pytest.mark.parametrize("tie", [True, False])
@pytest.mark.parametrize("num_kv_heads", [4, 2, 1], ids=["MHA", "GQA", "MQA"])
def test_converted_llama_gives_the_same_logits(num_kv_heads, tie):
    hf = hf_llama(num_kv_heads, tie)
    ours = GPT.from_transformers(hf)
    assert ours.config.num_kv_heads == num_kv_heads and ours.config.tie_weights == tie
    torch.testing.assert_close(ours(TOKENS), hf(TOKENS).logits, **F32)


def test_converted_llama_takes_rope_theta_and_rms_eps_from_the_config():
    ours = GPT.from_transformers(hf_llama(2, False, theta=321.0, eps=1e-3))
    assert ours.config.rope_base == 321.0 and ours.config.norm_eps == 1e-3
    assert all(b.norm1.eps == 1e-3 for b in ours.blocks)
    assert all(b.attn.rope_base == 321.0 for b in ours.blocks)


@pytest.mark.parametrize("tie", [True, False])
def test_tied_output_layer_shares_the_embedding_matrix(tie):
    model = small(tie_weights=tie)
    assert (model.lm_head.weight is model.tok_embed.weight) == tie


def test_gpt2_style_has_as_many_parameters_as_transformers_gpt2():
    hf = hf_gpt2()
    ours = GPT.from_transformers(hf)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


def test_llama_style_has_as_many_parameters_as_transformers_llama():
    hf = hf_llama(2, False)
    ours = GPT.from_transformers(hf)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())


def test_llama_style_has_no_biases_rmsnorm_swiglu_and_no_position_table():
    model = small("llama")
    assert not any(name.endswith("bias") for name, _ in model.named_parameters())
    assert isinstance(model.norm, mha.RMSNorm) and isinstance(model.blocks[0].mlp, mha.SwiGLU)
    assert model.pos_embed is None


def test_logits_have_shape_batch_time_vocab():
    assert small()(TOKENS[:, :10]).shape == (3, 10, 60)


@pytest.mark.parametrize("positions", ["learned", "rope", "alibi", "none"])
def test_a_position_never_sees_later_tokens(positions):
    model = small(positions=positions)
    changed = TOKENS.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 60
    torch.testing.assert_close(model(changed)[:, :10], model(TOKENS)[:, :10])


@pytest.mark.parametrize("static", [False, True], ids=["growing", "static"])
@pytest.mark.parametrize("style, positions", [("gpt2", None), ("llama", None),
                                              ("gpt2", "alibi"), ("llama", "none")])
def test_prefill_then_one_token_at_a_time_equals_the_full_pass(style, positions, static):
    model = small(style, positions=positions, num_kv_heads=2)
    caches = model.new_caches(max_len=17 if static else None)
    steps = [model(TOKENS[:, :9], caches)]  # prefill
    steps += [model(TOKENS[:, t:t + 1], caches) for t in range(9, 17)]  # decode
    torch.testing.assert_close(torch.cat(steps, dim=1), model(TOKENS), **F32)


def test_sequences_longer_than_max_len_are_rejected_with_learned_positions():
    with pytest.raises(ValueError, match="exceed max_len=32"):
        small()(torch.zeros(1, 33, dtype=torch.long))


def test_rope_model_runs_past_max_len():
    assert small("llama")(torch.zeros(1, 40, dtype=torch.long)).shape == (1, 40, 60)


def test_tokens_must_be_2d():
    with pytest.raises(ValueError, match=r"tokens must be a 2-D tensor \[B, T\]"):
        small()(TOKENS[0])


def test_loss_of_a_uniform_model_is_log_vocab():
    model = small(tie_weights=False)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    assert model.loss(TOKENS).item() == pytest.approx(math.log(60))


def test_loss_predicts_each_next_token():
    """Loss of the shifted targets, written out position by position."""
    model = small()
    logp = model(TOKENS[:, :-1]).log_softmax(-1)
    by_hand = -sum(logp[b, t, TOKENS[b, t + 1]] for b in range(3) for t in range(16)) / (3 * 16)
    assert model.loss(TOKENS).item() == pytest.approx(by_hand.item(), rel=1e-5)


def test_attention_weights_are_causal_distributions():
    _, weights = small()(TOKENS, need_weights=True)
    assert len(weights) == 2 and weights[0].shape == (3, 4, 17, 17)
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(3, 4, 17))
    assert (weights[0].triu(1) == 0).all()


@pytest.mark.parametrize("field, value, message", [
    ("style", "bert", "style must be one of"),
    ("positions", "sinusoidal", "positions must be one of"),
    ("d_model", 0, "d_model must be >= 1"),
])
def test_bad_config_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        GPTConfig(**{**dict(vocab_size=60, max_len=32, d_model=48, num_heads=4, num_layers=2,
                            d_ff=96), field: value})


def test_unknown_transformers_models_are_rejected():
    with pytest.raises(ValueError, match="converts GPT-2 and Llama"):
        GPT.from_transformers(SimpleNamespace(config=SimpleNamespace(model_type="bert")))


def test_default_norm_eps_follows_the_style():
    assert GPTConfig(60, 32, 48, 4, 2, 96).norm_eps == 1e-5
    assert GPTConfig(60, 32, 48, 4, 2, 96, style="llama").norm_eps == 1e-6


def test_presets_choose_the_style_and_mlp_width():
    assert GPTConfig.gpt2(60, 32, 48, 4, 2).d_ff == 192
    llama = GPTConfig.llama(60, 32, 48, 4, 2)
    assert llama.style == "llama" and llama.d_ff == 128  # 8/3 * 48 = 128


def _hf_causal_mask(T):
    """transformers' additive form of the causal mask: 0 where allowed, -inf elsewhere."""
    return torch.zeros(T, T).masked_fill(~mha.causal_mask(T), float("-inf"))[None, None]


def test_one_gpt2_block_alone_equals_transformers_gpt2_block():
    hf = hf_gpt2()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if ".ln_" in name:
                p.uniform_(0.5, 1.5)
    block = GPT.from_transformers(hf).blocks[1]
    assert isinstance(block, mha.Block)
    x = torch.randn(2, 9, 48, generator=torch.Generator().manual_seed(3))
    out, _ = block(x)  # mask defaults to causal
    expected = hf.transformer.h[1](x, attention_mask=_hf_causal_mask(9))
    expected = expected[0] if isinstance(expected, tuple) else expected
    torch.testing.assert_close(out, expected, **F32)


@pytest.mark.parametrize("num_kv_heads", [4, 2])
def test_one_llama_block_alone_equals_transformers_decoder_layer(num_kv_heads):
    hf = hf_llama(num_kv_heads, tie=False)
    block = GPT.from_transformers(hf).blocks[2]
    x = torch.randn(2, 9, 48, generator=torch.Generator().manual_seed(3))
    # [B, T], one row per sequence; RoPE sees only differences of positions, so the second
    # row jumps by 5 in the middle (a constant shift would change nothing)
    positions = torch.stack([torch.arange(9), torch.arange(9) + 5 * (torch.arange(9) >= 4)])
    cos_sin = hf.model.rotary_emb(x, positions)  # Llama computes RoPE's tables once per model
    expected = hf.model.layers[2](x, attention_mask=_hf_causal_mask(9), position_ids=positions,
                                  position_embeddings=cos_sin)
    expected = expected[0] if isinstance(expected, tuple) else expected
    out, _ = block(x, positions=positions)
    torch.testing.assert_close(out, expected, **F32)
    torch.testing.assert_close(block(x[:1])[0], out[:1])  # default positions: 0 .. T-1


@pytest.mark.parametrize("style", ["gpt2", "llama"])
def test_per_row_position_ids_equal_transformers_position_ids(style):
    hf = hf_gpt2() if style == "gpt2" else hf_llama(2, tie=False)
    ours = GPT.from_transformers(hf)
    # a shifted row (learned positions see it) and a row with a jump (RoPE, which sees only
    # differences of positions, sees that)
    jump = torch.arange(17) + 5 * (torch.arange(17) >= 8)
    positions = torch.stack([torch.arange(17), torch.arange(3, 20), jump])
    expected = hf(TOKENS, position_ids=positions).logits
    torch.testing.assert_close(ours(TOKENS, positions=positions), expected, **F32)
    # the 1-D form [T] is still the same positions for every row
    torch.testing.assert_close(ours(TOKENS, positions=torch.arange(3, 20)),
                               hf(TOKENS, position_ids=positions[1:2].expand(3, 17)).logits, **F32)


@pytest.mark.parametrize("style", ["gpt2", "llama"])
def test_left_padding_with_an_attention_mask_equals_transformers(style):
    hf = hf_gpt2() if style == "gpt2" else hf_llama(2, tie=False)
    ours = GPT.from_transformers(hf)
    lengths = [17, 12, 5]
    mask = torch.stack([torch.arange(17) >= 17 - n for n in lengths]).long()  # [B, S], left pads
    tokens = TOKENS.masked_fill(mask == 0, 1)  # the pad id is irrelevant: it is never seen
    positions = (mask.cumsum(-1) - 1).clamp(min=0)  # what transformers' generate would pass
    expected = hf(tokens, attention_mask=mask, position_ids=positions).logits
    logits = ours(tokens, attention_mask=mask)
    real = mask.bool()  # padded positions' logits mean nothing in either model
    torch.testing.assert_close(logits[real], expected[real], **F32)
    for b, n in enumerate(lengths):  # and each row equals its own unpadded run
        torch.testing.assert_close(logits[b, 17 - n:], ours(TOKENS[b:b + 1, 17 - n:])[0], **F32)


def test_attention_mask_must_cover_the_cached_and_new_tokens():
    model = small()
    caches = model.new_caches()
    model(TOKENS[:, :4], caches)
    with pytest.raises(ValueError, match=r"attention_mask must be \[B, S\] = \[3, 6\]"):
        model(TOKENS[:, 4:6], caches, attention_mask=torch.ones(3, 2))


@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "explicit"])
@pytest.mark.parametrize("positions", ["learned", "rope", "alibi", "none"])
def test_a_left_padded_row_equals_the_row_alone_and_padding_gets_no_weight(positions,
                                                                          need_weights):
    model = small(positions=positions)
    mask = torch.stack([torch.arange(12) >= pad for pad in (0, 4, 9)]).long()  # [B, S]
    out = model(TOKENS[:, :12], attention_mask=mask, need_weights=need_weights)
    logits, weights = out if need_weights else (out, None)
    for b, pad in enumerate((0, 4, 9)):
        alone = model(TOKENS[b:b + 1, pad:12])
        torch.testing.assert_close(logits[b, pad:], alone[0], **F32)
    if need_weights:
        for w in weights:  # [B, H, T, S]: no real query attends to a padding key
            assert (w[1, :, 4:, :4] == 0).all() and (w[2, :, 9:, :9] == 0).all()
