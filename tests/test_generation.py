"""mha.generate: greedy equals transformers' generate, the cache changes nothing, eos, errors."""
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

import mha
from mha import generate


def small_gpt(style="gpt2", seed=0, **kwargs):
    torch.manual_seed(seed)
    config = mha.GPTConfig(vocab_size=50, max_len=40, d_model=32, num_heads=4, num_layers=2,
                           d_ff=64, style=style, **kwargs)
    return mha.GPT(config).eval()


PROMPT = torch.randint(0, 50, (3, 5), generator=torch.Generator().manual_seed(0))


def hf_gpt2(init=0.02):
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=60, n_positions=48, n_embd=32, n_layer=2, n_head=4,
                        bos_token_id=0, eos_token_id=1, initializer_range=init)
    return GPT2LMHeadModel(config).eval()


def hf_llama(num_kv_heads):
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=60, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=num_kv_heads,
                         max_position_embeddings=64, bos_token_id=0, eos_token_id=1,
                         pad_token_id=1)
    return LlamaForCausalLM(config).eval()


@pytest.mark.parametrize("make_hf", [hf_gpt2, lambda: hf_llama(2), lambda: hf_llama(1)],
                         ids=["gpt2", "llama-gqa", "llama-mqa"])
def test_greedy_generation_equals_transformers(make_hf):
    hf = make_hf()
    prompt = torch.randint(2, 60, (2, 6), generator=torch.Generator().manual_seed(1))
    theirs = hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=20,
                         min_new_tokens=20, do_sample=False, eos_token_id=None, pad_token_id=1)
    ours = generate(mha.GPT.from_transformers(hf), prompt, 20, temperature=0)
    assert torch.equal(ours, theirs)


@pytest.mark.parametrize("style", ["gpt2", "llama"])
@pytest.mark.parametrize("sampling", [dict(temperature=0), dict(temperature=1.0),
                                      dict(temperature=0.8, top_k=5), dict(top_p=0.9)])
def test_no_cache_growing_cache_and_static_cache_give_identical_tokens(style, sampling):
    model = small_gpt(style)
    runs = [generate(model, PROMPT, 25, generator=torch.Generator().manual_seed(7),
                     use_cache=use_cache, static_cache=static, **sampling)
            for use_cache, static in ((False, False), (True, False), (True, True))]
    assert torch.equal(runs[0], runs[1]), "growing cache"
    assert torch.equal(runs[0], runs[2]), "static cache"


def test_output_extends_the_prompt():
    out = generate(small_gpt(), PROMPT, 10, generator=torch.Generator().manual_seed(0))
    assert out.shape == (3, 15) and out.dtype == torch.long
    assert torch.equal(out[:, :5], PROMPT)


def test_same_generator_seed_gives_the_same_sample():
    model = small_gpt()
    a = generate(model, PROMPT, 10, generator=torch.Generator().manual_seed(3))
    b = generate(model, PROMPT, 10, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_top_k_one_is_greedy():
    model = small_gpt()
    sampled = generate(model, PROMPT, 12, top_k=1, generator=torch.Generator().manual_seed(0))
    assert torch.equal(sampled, generate(model, PROMPT, 12, temperature=0))


def test_greedy_picks_the_argmax_of_the_uncached_model_at_every_step():
    model = small_gpt("llama")
    out = generate(model, PROMPT, 8, temperature=0)
    for t in range(5, 13):
        assert torch.equal(out[:, t], model(out[:, :t])[:, -1].argmax(-1))


def test_rows_that_emit_eos_are_padded_and_generation_stops_when_all_finished():
    """Expected result built from a run without eos: cut each row after its first eos,
    pad with eos, and stop at the row that finishes last."""
    model = small_gpt(seed=1)
    free = generate(model, PROMPT, 30, generator=torch.Generator().manual_seed(0))
    rows = [row[5:] for row in free.tolist()]
    eos = min(set.intersection(*map(set, rows)))  # a token every row emits at some point
    ends = [row.index(eos) + 1 for row in rows]
    assert max(ends) < 30  # the test needs an early stop
    expected = [row[:end] + [eos] * (max(ends) - end) for row, end in zip(rows, ends)]
    out = generate(model, PROMPT, 30, eos_id=eos, generator=torch.Generator().manual_seed(0))
    assert out[:, 5:].tolist() == expected


def test_rope_model_can_generate_past_max_len():
    model = small_gpt("llama")
    assert generate(model, PROMPT, 50, temperature=0).shape == (3, 55)


@pytest.mark.parametrize("kwargs, message", [
    (dict(temperature=-0.5), "temperature must be >= 0"),
    (dict(top_k=0), "k must be an integer >= 1"),
    (dict(top_p=0.0), r"must lie in \(0, 1\]"),
    (dict(top_p=1.2), r"must lie in \(0, 1\]"),
])
def test_bad_sampling_arguments_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        generate(small_gpt(), PROMPT, 3, **kwargs)


def test_a_prompt_that_is_not_2d_is_rejected():
    with pytest.raises(ValueError, match=r"prompt must be a 2-D tensor"):
        generate(small_gpt(), PROMPT[0], 3)


def test_generating_past_learned_positions_is_rejected():
    with pytest.raises(ValueError, match="exceeds max_len=40"):
        generate(small_gpt(), PROMPT, 36)


@pytest.mark.parametrize("use_cache", [False, True])
def test_generated_tokens_can_be_trained_on(use_cache):
    """generate runs under torch.inference_mode; what it returns must be an ordinary tensor
    that autograd accepts (an embedding lookup saves its ids for backward)."""
    model = small_gpt().train()
    out = generate(model, PROMPT, 4, temperature=0, use_cache=use_cache)
    assert not out.is_inference()
    model.loss(out).backward()
    assert model.tok_embed.weight.grad is not None


def test_generation_restores_training_mode():
    model = small_gpt().train()
    generate(model, PROMPT, 2)
    assert model.training


def left_padded(rows, pad_id):
    """Prompts of different lengths -> (tokens [B, T0] padded on the left, mask [B, T0])."""
    T0 = max(len(r) for r in rows)
    tokens = torch.tensor([[pad_id] * (T0 - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (T0 - len(r)) + [1] * len(r) for r in rows])
    return tokens, mask


ROWS = [torch.randint(2, 60, (n,), generator=torch.Generator().manual_seed(n)).tolist()
        for n in (7, 3, 5, 1)]


# GPT-2's default init (std 0.02) leaves attention nearly uniform and the next token nearly a
# function of the last one; std 0.2 makes every row's tokens depend on its whole prompt
@pytest.mark.parametrize("make_hf", [lambda: hf_gpt2(init=0.2), lambda: hf_llama(2)],
                         ids=["gpt2", "llama-gqa"])
def test_batched_greedy_generation_with_left_padding_equals_transformers(make_hf):
    hf = make_hf()
    prompt, mask = left_padded(ROWS, pad_id=1)
    theirs = hf.generate(prompt, attention_mask=mask, max_new_tokens=15, min_new_tokens=15,
                         do_sample=False, eos_token_id=None, pad_token_id=1)
    model = mha.GPT.from_transformers(hf)
    ours = generate(model, prompt, 15, temperature=0, attention_mask=mask)
    assert torch.equal(ours, theirs)
    T0 = prompt.shape[1]
    for b, row in enumerate(ROWS):  # each row is what that prompt gives alone
        alone = generate(model, torch.tensor([row]), 15, temperature=0)
        assert ours[b, T0 - len(row):].tolist() == alone[0].tolist()


@pytest.mark.parametrize("style", ["gpt2", "llama"])
def test_left_padded_generation_is_the_same_without_cache_and_with_either_cache(style):
    model = small_gpt(style)
    prompt, mask = left_padded([[t % 50 for t in r[:5]] for r in ROWS], pad_id=0)  # vocab 50
    runs = [generate(model, prompt, 12, attention_mask=mask, use_cache=use_cache,
                     static_cache=static, generator=torch.Generator().manual_seed(1))
            for use_cache, static in ((False, False), (True, False), (True, True))]
    assert torch.equal(runs[0], runs[1]) and torch.equal(runs[0], runs[2])


def test_left_padding_does_not_count_against_learned_positions():
    # padded to 6, the longest prompt has 4 real tokens: 4 + 4 new tokens fit max_len=8
    torch.manual_seed(0)
    model = mha.GPT(mha.GPTConfig(vocab_size=50, max_len=8, d_model=32, num_heads=4,
                                  num_layers=2, d_ff=64, style="gpt2")).eval()
    prompt = torch.tensor([[0, 0, 3, 1, 4, 1],
                           [0, 0, 0, 0, 5, 9],
                           [0, 0, 0, 0, 0, 2]])
    mask = (torch.arange(6) >= torch.tensor([[2], [4], [5]])).long()  # 1 = real token
    out = generate(model, prompt, 4, temperature=0, attention_mask=mask)
    for b in range(3):  # each row is what its prompt gives alone
        row = prompt[b][mask[b].bool()]
        alone = generate(model, row[None], 4, temperature=0)
        assert out[b, 6 - len(row):].tolist() == alone[0].tolist()


@pytest.mark.parametrize("mask, message", [
    ([[1, 1, 0]], "every prompt must end with a real token"),
    ([[1, 0, 1]], "padding .0. may only come before the real tokens"),
    ([[1, 1]], r"attention_mask must have the prompt's shape \[1, 3\]"),
])
def test_attention_masks_that_are_not_left_padding_are_rejected(mask, message):
    with pytest.raises(ValueError, match=message):
        generate(small_gpt(), PROMPT[:1, :3], 2, attention_mask=torch.tensor(mask))
