"""greedy_decode: the contract, and a KV cache that changes speed but not the answer."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mha import Transformer, greedy_decode, padding_mask

F32 = dict(atol=1e-5, rtol=1e-4)  # float32: one step at a time rounds differently

BOS, EOS = 1, 2


def _model(seed=0, norm_first=False, layers=2, heads=4):
    torch.manual_seed(seed)
    return Transformer(10, 12, d_model=16, num_heads=heads, num_layers=layers, d_ff=32,
                       norm_first=norm_first).eval()


def _reference_greedy(model, src, max_len, src_mask=None):
    """Re-run the whole model on the whole prefix each step; no eos handling."""
    tokens = torch.full((src.shape[0], 1), BOS)
    with torch.no_grad():
        for _ in range(max_len - 1):
            next_token = model(src, tokens, src_mask)[:, -1].argmax(-1)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)
    return tokens


@given(seed=st.integers(0, 2**16), norm_first=st.booleans(), layers=st.integers(1, 2),
       heads=st.sampled_from([1, 2, 4]), max_len=st.integers(1, 12))
def test_cached_and_uncached_decoding_agree_with_the_reference(seed, norm_first, layers, heads,
                                                               max_len):
    model = _model(seed, norm_first, layers, heads)
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, 10, (3, 6), generator=g)
    src_mask = padding_mask(torch.tensor([6, 4, 2]), 6)
    expected = _reference_greedy(model, src, max_len, src_mask)
    for use_cache, static_cache in ((True, False), (True, True), (False, False)):
        got = greedy_decode(model, src, max_len, BOS, None, use_cache=use_cache,
                            src_mask=src_mask, static_cache=static_cache)
        assert torch.equal(got, expected), f"use_cache={use_cache}, static={static_cache}"


@pytest.mark.parametrize("static", [False, True], ids=["growing", "static"])
@pytest.mark.parametrize("kv", [None, 2, 1], ids=["mha", "gqa", "mqa"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_steps_give_the_teacher_forcing_logits_at_every_position(kv, norm_first, static):
    """One token at a time, a step can only see the past; teacher forcing sees the whole
    target at once. Equal logits mean the decoder's self-attention is causal, the cache
    holds the right keys in the right order, and positions continue after the cache."""
    torch.manual_seed(0)
    model = Transformer(11, 13, 16, 4, 2, 32, norm_first=norm_first, num_kv_heads=kv).eval()
    src = torch.randint(0, 11, (3, 5))
    tgt = torch.randint(0, 13, (3, 24))  # longer than the cache's first buffer (16)
    with torch.no_grad():
        memory = model.encode(src)
        teacher_forced = model.decode(tgt, memory)  # every position at once
        caches = model.new_caches(max_len=24 if static else None)
        steps = [model.decode(tgt[:, t:t + 1], memory, caches=caches) for t in range(24)]
    torch.testing.assert_close(torch.cat(steps, dim=1), teacher_forced, **F32)
    assert all(len(self_c) == 24 and len(cross_c) == 5 for self_c, cross_c in caches)


def test_output_starts_with_bos_and_respects_max_len():
    out = greedy_decode(_model(), torch.randint(3, 10, (4, 5)), 7, BOS, EOS)
    assert (out[:, 0] == BOS).all()
    assert out.shape[0] == 4 and out.shape[1] <= 7


def test_without_eos_decoding_never_stops_early():
    out = greedy_decode(_model(), torch.randint(3, 10, (2, 5)), 9, BOS, None)
    assert out.shape == (2, 9)


def _model_that_emits_eos_at(call_per_row):
    """A model with scripted output: on its n-th decode call, row b says EOS if
    n == call_per_row[b], else token 5."""
    model = _model()
    script = torch.tensor(call_per_row)
    calls = []

    def scripted_decode(tgt, memory, src_mask=None, tgt_mask=None, caches=None):
        calls.append(1)
        logits = torch.zeros(tgt.shape[0], tgt.shape[1], 12)
        logits[:, -1, 5] = 1.0
        logits[script == len(calls), -1, EOS] = 2.0
        return logits

    model.decode = scripted_decode
    return model


@pytest.mark.parametrize("use_cache", [True, False])
def test_finished_rows_are_padded_with_eos(use_cache):
    # row 0 says EOS on call 2; afterwards its model output (token 5) must be overridden
    model = _model_that_emits_eos_at([2, 4])
    out = greedy_decode(model, torch.randint(3, 10, (2, 5)), 20, BOS, EOS, use_cache=use_cache)
    assert out[0].tolist() == [BOS, 5, EOS, EOS, EOS]


@pytest.mark.parametrize("use_cache", [True, False])
def test_decoding_stops_as_soon_as_every_row_has_finished(use_cache):
    model = _model_that_emits_eos_at([2, 4])
    out = greedy_decode(model, torch.randint(3, 10, (2, 5)), 20, BOS, EOS, use_cache=use_cache)
    assert out.shape == (2, 5)  # not 20: after call 4 both rows are done
    assert out[1].tolist() == [BOS, 5, 5, 5, EOS]


def test_no_state_survives_between_calls():
    model = _model()
    src = torch.randint(3, 10, (2, 5))
    first = greedy_decode(model, src, 8, BOS, EOS)
    other = greedy_decode(model, torch.randint(3, 10, (2, 7)), 8, BOS, EOS)
    assert other.shape[0] == 2
    assert torch.equal(greedy_decode(model, src, 8, BOS, EOS), first)


def test_training_mode_is_restored():
    model = _model().train()
    greedy_decode(model, torch.randint(3, 10, (1, 4)), 4, BOS, EOS)
    assert model.training


def test_decoded_tokens_can_be_trained_on():
    """The loop runs under torch.inference_mode, whose tensors autograd refuses to save;
    the result must be an ordinary tensor, e.g. as the targets of a training step."""
    model = _model().train()
    out = greedy_decode(model, torch.randint(3, 10, (2, 4)), 6, BOS, EOS)
    assert not out.is_inference()
    model(torch.randint(3, 10, (2, 4)), out).sum().backward()  # embeds `out`: saved for backward
    assert model.tgt_embed.weight.grad is not None


def _rows_projected(model, use_cache, max_len=10):
    """How many token rows go through the decoder's key projections during decoding."""
    counts = {"self": 0, "cross": 0}

    def counter(kind):
        def hook(module, inputs, output):
            counts[kind] += inputs[0].shape[0] * inputs[0].shape[1]
        return hook

    handles = [layer.self_attn.k_proj.register_forward_hook(counter("self"))
               for layer in model.decoder_layers]
    handles += [layer.cross_attn.k_proj.register_forward_hook(counter("cross"))
                for layer in model.decoder_layers]
    greedy_decode(model, torch.randint(3, 10, (1, 6)), max_len, BOS, None, use_cache=use_cache)
    for h in handles:
        h.remove()
    return counts


def test_cache_projects_each_new_token_once():
    model = _model(layers=2)
    steps = 9  # max_len 10 = bos + 9 generated tokens
    cached = _rows_projected(model, use_cache=True)
    assert cached["self"] == 2 * steps           # one new row per layer per step
    assert cached["cross"] == 2 * 6              # the 6 memory rows, once per layer
    uncached = _rows_projected(model, use_cache=False)
    assert uncached["self"] == 2 * sum(range(1, steps + 1))  # the whole prefix every step


def test_error_for_max_len_below_one():
    with pytest.raises(ValueError, match="max_len.*>= 1; got 0"):
        greedy_decode(_model(), torch.randint(3, 10, (1, 4)), 0, BOS, EOS)


def test_static_cache_decoding_equals_the_growing_cache_on_a_longer_run():
    """40 steps (the growing cache reallocates twice on the way) at batch 5, eos ignored."""
    model = _model(3, norm_first=True)
    src = torch.randint(3, 10, (5, 7), generator=torch.Generator().manual_seed(3))
    growing = greedy_decode(model, src, 41, BOS, None)
    static = greedy_decode(model, src, 41, BOS, None, static_cache=True)
    assert torch.equal(static, growing)
    assert torch.equal(static, _reference_greedy(model, src, 41))
