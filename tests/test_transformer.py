"""Encoder/decoder layers against PyTorch's, and invariants of the whole Transformer."""
import math

import pytest
import torch
import torch.nn as nn
from hypothesis import given
from hypothesis import strategies as st

from helpers import copy_feed_forward, copy_norm, randomize_norms
from mha import (DecoderLayer, EncoderLayer, FeedForward, Transformer, causal_mask,
                 padding_mask, sinusoidal_positions)
from mha.course.references import torch_twin


def _torch_layer(ours):
    """PyTorch's nn.TransformerEncoderLayer or nn.TransformerDecoderLayer with the weights
    of our EncoderLayer or DecoderLayer ``ours``."""
    decoder = isinstance(ours, DecoderLayer)
    torch_class = nn.TransformerDecoderLayer if decoder else nn.TransformerEncoderLayer
    D, H = ours.self_attn.d_model, ours.self_attn.num_heads
    theirs = torch_class(D, H, ours.ff.expand.out_features, dropout=0.0, batch_first=True,
                         norm_first=ours.norm_first, dtype=ours.ff.expand.weight.dtype)
    theirs.self_attn.load_state_dict(torch_twin(ours.self_attn).state_dict())
    if decoder:
        theirs.multihead_attn.load_state_dict(torch_twin(ours.cross_attn).state_dict())
    copy_feed_forward(ours.ff, theirs)
    for i in (1, 2, 3) if decoder else (1, 2):
        copy_norm(getattr(ours, f"norm{i}"), getattr(theirs, f"norm{i}"))
    return theirs.eval()


def _ours_and_torchs(layer_class, D, H, d_ff, norm_first: bool, seed: int):
    """Our EncoderLayer or DecoderLayer (float64, norms perturbed) and PyTorch's
    nn.TransformerEncoderLayer or nn.TransformerDecoderLayer with the same weights."""
    torch.manual_seed(seed)
    ours = layer_class(D, H, d_ff, norm_first=norm_first).double().eval()
    randomize_norms(ours)
    return ours, _torch_layer(ours)


@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "explicit"])
@pytest.mark.parametrize("norm_first", [False, True])
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_encoder_layer_matches_torch(need_weights, norm_first, lengths, seed):
    ours, theirs = _ours_and_torchs(EncoderLayer, 12, 3, 20, norm_first, seed)
    B, S = len(lengths), max(lengths)
    x = torch.randn(B, S, 12, dtype=torch.float64)
    mask = padding_mask(torch.tensor(lengths), S)
    out, _ = ours(x, mask, need_weights)
    expected = theirs(x, src_key_padding_mask=~mask[:, 0, 0])
    valid = mask[:, 0, 0]  # PyTorch may fill padded query rows differently
    torch.testing.assert_close(out[valid], expected[valid])


@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "explicit"])
@pytest.mark.parametrize("norm_first", [False, True])
@given(T=st.integers(1, 5), lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       seed=st.integers(0, 2**16))
def test_decoder_layer_matches_torch(need_weights, norm_first, T, lengths, seed):
    ours, theirs = _ours_and_torchs(DecoderLayer, 12, 4, 16, norm_first, seed)
    B, S = len(lengths), max(lengths)
    x = torch.randn(B, T, 12, dtype=torch.float64)
    memory = torch.randn(B, S, 12, dtype=torch.float64)
    src_mask = padding_mask(torch.tensor(lengths), S)
    out, _ = ours(x, memory, causal_mask(T), src_mask, need_weights=need_weights)
    expected = theirs(x, memory, tgt_mask=~causal_mask(T),
                      memory_key_padding_mask=~src_mask[:, 0, 0])
    torch.testing.assert_close(out, expected)


def test_feed_forward_acts_on_each_position_independently():
    ff = FeedForward(8, 32)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(ff(x)[:, 3], ff(x[:, 3:4])[:, 0])


def _model(norm_first=False, seed=0):
    torch.manual_seed(seed)
    return Transformer(13, 11, d_model=16, num_heads=4, num_layers=2, d_ff=32,
                       norm_first=norm_first).eval()


@pytest.mark.parametrize("norm_first", [False, True])
def test_forward_returns_logits_for_every_target_position(norm_first):
    logits = _model(norm_first)(torch.randint(0, 13, (3, 7)), torch.randint(0, 11, (3, 5)))
    assert logits.shape == (3, 5, 11)


@pytest.mark.parametrize("norm_first", [False, True])
@given(t=st.integers(0, 5), seed=st.integers(0, 2**16))
def test_logits_at_t_ignore_later_target_tokens(norm_first, t, seed):
    model = _model(norm_first)
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, 13, (2, 6), generator=g)
    tgt = torch.randint(0, 11, (2, 7), generator=g)
    changed = tgt.clone()
    changed[:, t + 1:] = torch.randint(0, 11, changed[:, t + 1:].shape, generator=g)
    torch.testing.assert_close(model(src, tgt)[:, :t + 1], model(src, changed)[:, :t + 1])


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_output_ignores_padded_source_positions(norm_first):
    model = _model(norm_first)
    lengths = torch.tensor([6, 3, 1])
    mask = padding_mask(lengths, 6)
    src = torch.randint(0, 13, (3, 6))
    other = src.clone()
    other[~mask[:, 0, 0]] = torch.randint(0, 13, (int((~mask).sum()),))
    valid = mask[:, 0, 0]
    torch.testing.assert_close(model.encode(src, mask)[valid], model.encode(other, mask)[valid])
    tgt = torch.randint(0, 11, (3, 4))
    torch.testing.assert_close(model(src, tgt, mask), model(other, tgt, mask))


def test_without_a_source_mask_padding_does_leak():
    """The previous test can fail: without the mask, padded tokens change the output."""
    model = _model()
    src = torch.randint(0, 13, (1, 6))
    other = src.clone()
    other[0, 4:] = (src[0, 4:] + 1) % 13
    assert not torch.allclose(model.encode(src)[0, :4], model.encode(other)[0, :4])


def test_target_mask_is_combined_with_the_causal_mask():
    model = _model()
    src, tgt = torch.randint(0, 13, (2, 5)), torch.randint(0, 11, (2, 4))
    tgt_mask = padding_mask(torch.tensor([4, 2]), 4)
    maps = model.attention_maps(src, tgt, tgt_mask=tgt_mask)
    allowed = causal_mask(4) & tgt_mask[:, 0]  # [B, T, T]
    for weights in maps["decoder_self"]:
        assert (weights.masked_select(~allowed[:, None]) == 0).all()
        assert (weights.masked_select(allowed[:, None]) > 0).all()


def test_source_mask_also_masks_cross_attention():
    model = _model()
    src, tgt = torch.randint(0, 13, (2, 5)), torch.randint(0, 11, (2, 3))
    src_mask = padding_mask(torch.tensor([5, 2]), 5)
    maps = model.attention_maps(src, tgt, src_mask)
    for weights in maps["decoder_cross"]:
        assert (weights[1, :, :, 2:] == 0).all() and (weights[0] > 0).all()
    for weights in maps["encoder"]:
        assert (weights[1, :, :, 2:] == 0).all()


@pytest.mark.parametrize("norm_first", [False, True])
def test_explicit_path_gives_the_logits_of_the_fused_path(norm_first):
    model = _model(norm_first)
    src, tgt = torch.randint(0, 13, (3, 6)), torch.randint(0, 11, (3, 5))
    src_mask = padding_mask(torch.tensor([6, 4, 2]), 6)
    with torch.no_grad():
        memory, _ = model.encode(src, src_mask, need_weights=True)
        explicit, _ = model.decode(tgt, memory, src_mask, need_weights=True)
        fused = model(src, tgt, src_mask)
    torch.testing.assert_close(explicit, fused, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_model_equals_torch_layers_fed_the_papers_embeddings(norm_first):
    """Section 3.4 of the paper: the embeddings are multiplied by sqrt(d_model) and the
    sinusoidal positions are added. The reference computes that input by hand and runs
    PyTorch's own encoder and decoder layers (weights copied from ours) on it."""
    torch.manual_seed(0)
    D = 16
    model = Transformer(13, 11, d_model=D, num_heads=4, num_layers=2, d_ff=32,
                        norm_first=norm_first).double().eval()
    randomize_norms(model)
    src, tgt = torch.randint(0, 13, (2, 6)), torch.randint(0, 11, (2, 5))
    pe = sinusoidal_positions(6, D).double()
    memory = model.src_embed.weight[src] * math.sqrt(D) + pe[:6]  # [B, S, D]
    x = model.tgt_embed.weight[tgt] * math.sqrt(D) + pe[:5]  # [B, T, D]
    with torch.no_grad():
        for layer in model.encoder_layers:
            memory = _torch_layer(layer)(memory)
        memory = model.encoder_norm(memory)  # Pre-LN's final norm (identity for Post-LN)
        for layer in model.decoder_layers:
            x = _torch_layer(layer)(x, memory, tgt_mask=~causal_mask(5))
        expected = model.generator(model.decoder_norm(x))
        torch.testing.assert_close(model(src, tgt), expected)


def test_encoder_and_decoder_depths_can_differ():
    torch.manual_seed(0)
    model = Transformer(13, 11, 16, 4, 2, 32, num_encoder_layers=3, num_decoder_layers=1)
    assert len(model.encoder_layers) == 3 and len(model.decoder_layers) == 1
    maps = model.attention_maps(torch.randint(0, 13, (2, 5)), torch.randint(0, 11, (2, 4)))
    assert len(maps["encoder"]) == 3 and len(maps["decoder_self"]) == 1
    assert len(model.new_caches()) == 1


def test_num_layers_sets_both_depths_by_default():
    model = Transformer(13, 11, 16, 4, 3, 32)
    assert len(model.encoder_layers) == len(model.decoder_layers) == 3
    only_encoder = Transformer(13, 11, 16, 4, 3, 32, num_encoder_layers=1)
    assert len(only_encoder.encoder_layers) == 1 and len(only_encoder.decoder_layers) == 3


@pytest.mark.parametrize("name", ["num_encoder_layers", "num_decoder_layers"])
@pytest.mark.parametrize("value", [0, True])
def test_error_for_a_depth_that_is_not_a_positive_integer(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a positive integer, got {name}={value}"):
        Transformer(13, 11, 16, 4, 2, 32, **{name: value})


def test_embed_target_places_tokens_at_their_offset():
    model = _model()
    tgt = torch.randint(0, 11, (2, 6))
    whole = model.embed_target(tgt)
    torch.testing.assert_close(model.embed_target(tgt[:, 4:], start=4), whole[:, 4:])
    assert not torch.allclose(model.embed_target(tgt[:, 4:]), whole[:, 4:])


def test_error_for_1d_token_ids():
    with pytest.raises(ValueError, match=r"2-D tensor \[B, T\]; got shape \[5\]"):
        _model().encode(torch.randint(0, 13, (5,)))


def test_error_for_sequences_longer_than_max_len():
    model = Transformer(5, 5, 8, 2, 1, 16, max_len=4)
    with pytest.raises(ValueError, match="exceed max_len=4"):
        model.encode(torch.zeros(1, 6, dtype=torch.long))
