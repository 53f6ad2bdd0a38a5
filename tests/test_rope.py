"""Rotary position embeddings against the complex-number formula and transformers' Llama."""
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from mha import apply_rope


def rope_by_complex_numbers(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """The RoFormer formula: feature pair i is the complex number x[i] + 1j * x[i + d/2],
    multiplied by exp(1j * p * base^(-2i/d)). Works in float64 throughout."""
    d = x.shape[-1]
    z = torch.complex(x[..., : d // 2], x[..., d // 2:]).to(torch.complex128)
    theta = torch.tensor([base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)
    angle = positions.double()[:, None] * theta[None, :]  # [L, d/2]
    turned = z * torch.polar(torch.ones_like(angle), angle)
    return torch.cat([turned.real, turned.imag], dim=-1)


@given(L=st.integers(1, 12), half=st.integers(1, 8), start=st.integers(0, 500),
       base=st.sampled_from([100.0, 10000.0, 500000.0]), seed=st.integers(0, 2**16))
def test_rope_equals_the_complex_rotation_formula(L, half, start, base, seed):
    torch.manual_seed(seed)
    x = torch.randn(2, 3, L, 2 * half, dtype=torch.float64)
    positions = torch.arange(start, start + L)
    torch.testing.assert_close(apply_rope(x, positions, base),
                               rope_by_complex_numbers(x, positions, base))


@pytest.mark.parametrize("head_dim, base", [(8, 10000.0), (16, 500000.0), (64, 10000.0)])
def test_rope_equals_transformers_llama_apply_rotary_pos_emb(head_dim, base):
    config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4,
                         rope_parameters={"rope_type": "default", "rope_theta": base})
    rotary = LlamaRotaryEmbedding(config)
    q, k = torch.randn(2, 4, 10, head_dim), torch.randn(2, 2, 10, head_dim)
    positions = torch.arange(37, 47)
    cos, sin = rotary(q, positions[None, :])  # [1, L, head_dim]
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(apply_rope(q, positions, base), q_hf)
    torch.testing.assert_close(apply_rope(k, positions, base), k_hf)


@given(p=st.integers(0, 200), s=st.integers(0, 200), shift=st.integers(0, 1000),
       seed=st.integers(0, 2**16))
def test_rope_score_depends_only_on_the_relative_offset(p, s, shift, seed):
    torch.manual_seed(seed)
    q, k = torch.randn(1, 16, dtype=torch.float64), torch.randn(1, 16, dtype=torch.float64)

    def score(query_pos, key_pos):
        return (apply_rope(q, torch.tensor([query_pos])) @
                apply_rope(k, torch.tensor([key_pos])).T).item()

    assert score(p, s) == pytest.approx(score(p + shift, s + shift), rel=1e-9, abs=1e-9)


def test_rope_score_changes_with_the_offset():
    q = k = torch.randn(1, 16, dtype=torch.float64)
    scores = [(apply_rope(q, torch.tensor([off])) @ apply_rope(k, torch.tensor([0])).T).item()
              for off in range(4)]
    assert len({round(s, 6) for s in scores}) == 4


def test_rope_preserves_the_norm_of_every_vector():
    x = torch.randn(3, 20, 32, dtype=torch.float64)
    rotated = apply_rope(x, torch.arange(100, 120))
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))


def test_rope_at_position_zero_is_the_identity():
    x = torch.randn(2, 1, 8)
    torch.testing.assert_close(apply_rope(x, torch.tensor([0])), x)


def test_rope_rotates_pair_i_with_i_plus_half_by_hand():
    # d = 4: pairs (0, 2) and (1, 3); theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01
    x = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    p = 2
    expected = torch.tensor([[math.cos(2), math.cos(0.02), math.sin(2), math.sin(0.02)]],
                            dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, torch.tensor([p])), expected)


def test_interleaved_layout_is_the_same_rotation_with_columns_permuted():
    d = 8
    x = torch.randn(5, d, dtype=torch.float64)
    positions = torch.arange(5) * 7
    # the paper's layout: pair (2i, 2i+1) is the complex number x[2i] + 1j * x[2i+1]
    pairs = torch.view_as_complex(x.reshape(5, d // 2, 2).contiguous())
    theta = torch.tensor([10000 ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)
    angle = positions.double()[:, None] * theta
    interleaved = torch.view_as_real(pairs * torch.polar(torch.ones_like(angle), angle))
    interleaved = interleaved.reshape(5, d)
    # columns 0, 2, 4, 6 become the first half, 1, 3, 5, 7 the second
    to_halves = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
    torch.testing.assert_close(apply_rope(x[:, to_halves], positions), interleaved[:, to_halves])


def test_rope_keeps_the_input_dtype():
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    out = apply_rope(x, torch.arange(4))
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), apply_rope(x.float(), torch.arange(4)),
                               atol=2e-2, rtol=2e-2)


def test_rope_rejects_an_odd_head_width():
    with pytest.raises(ValueError, match="even"):
        apply_rope(torch.randn(2, 3, 5), torch.arange(3))


@pytest.mark.parametrize("positions", [torch.arange(4), torch.arange(3.0), torch.zeros(1, 3).long()])
def test_rope_rejects_positions_that_are_not_one_integer_per_row(positions):
    with pytest.raises(ValueError, match="positions"):
        apply_rope(torch.randn(2, 3, 8), positions)


def test_a_decoding_step_must_rotate_the_new_query_at_the_cache_offset():
    q, k = torch.randn(6, 16, dtype=torch.float64), torch.randn(6, 16, dtype=torch.float64)
    cached_keys = apply_rope(k, torch.arange(6))  # keys are rotated once, before caching
    full_scores = apply_rope(q, torch.arange(6)) @ cached_keys.T  # [6, 6]
    step = apply_rope(q[5:], torch.tensor([5])) @ cached_keys.T  # the new token is at position 5
    torch.testing.assert_close(step, full_scores[5:])
    forgot_offset = apply_rope(q[5:], torch.tensor([0])) @ cached_keys.T
    assert not torch.allclose(forgot_offset, full_scores[5:])


# --- the interleaved layout: Meta's Llama reference code and GPT-J ------------------------

def rope_meta_llama_reference(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """Meta's Llama reference (``precompute_freqs_cis`` + ``apply_rotary_emb``), written
    literally: neighbours (2i, 2i+1) are the complex number x[2i] + 1j * x[2i+1], multiplied
    by exp(1j * p * base^(-2i/d)). float64 throughout."""
    d = x.shape[-1]
    freqs = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)  # [d/2]
    angles = torch.outer(positions.double(), freqs)  # [L, d/2]
    freqs_cis = torch.polar(torch.ones_like(angles), angles)  # e^(i * angle)
    x_complex = torch.view_as_complex(x.double().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_complex * freqs_cis).flatten(-2)


@given(L=st.integers(1, 12), half=st.integers(1, 8), start=st.integers(0, 500),
       base=st.sampled_from([100.0, 10000.0, 500000.0]), seed=st.integers(0, 2**16))
def test_interleaved_rope_equals_meta_llamas_complex_number_code(L, half, start, base, seed):
    torch.manual_seed(seed)
    x = torch.randn(2, 3, L, 2 * half, dtype=torch.float64)
    positions = torch.arange(start, start + L)
    torch.testing.assert_close(apply_rope(x, positions, base, layout="interleaved"),
                               rope_meta_llama_reference(x, positions, base))


def test_interleaved_rope_turns_neighbouring_columns_by_hand():
    # d = 4: pairs (0, 1) and (2, 3); theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01
    x = torch.tensor([[1.0, 0.0, 1.0, 0.0]], dtype=torch.float64)
    expected = torch.tensor([[math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)]],
                            dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, torch.tensor([2]), layout="interleaved"), expected)


def test_a_gpt_with_interleaved_rope_equals_one_with_rotate_half_after_permuting_q_k_rows():
    from mha import GPT, GPTConfig
    torch.manual_seed(0)
    config = GPTConfig.llama(50, 32, 32, num_heads=2, num_layers=2)
    half = GPT(config).eval()
    inter = GPT(GPTConfig.llama(50, 32, 32, num_heads=2, num_layers=2, rope_layout="interleaved"))
    # head column 2i (interleaved) holds what column i (half) holds, 2i+1 what i + d/2 holds
    d = config.d_model // config.num_heads
    to_half = torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], dim=1).flatten()
    rows = torch.cat([h * d + to_half for h in range(config.num_heads)])
    state = half.state_dict()
    for name in state:
        if name.endswith(("q_proj.weight", "k_proj.weight")):
            state[name] = state[name][rows]
    inter.load_state_dict(state)
    tokens = torch.randint(0, 50, (2, 20))
    torch.testing.assert_close(inter.eval()(tokens), half(tokens), atol=1e-5, rtol=1e-5)


# --- per-row positions, devices, bad options ---------------------------------------------

def test_per_row_positions_rotate_each_sequence_by_its_own_positions():
    x = torch.randn(3, 2, 5, 8, dtype=torch.float64)  # [B, H, L, d]
    positions = torch.tensor([[0, 1, 2, 3, 4], [0, 0, 0, 1, 2], [10, 11, 12, 13, 14]])
    expected = torch.stack([apply_rope(x[b], positions[b]) for b in range(3)])
    torch.testing.assert_close(apply_rope(x, positions), expected)


def test_rope_tables_are_built_on_the_inputs_device():
    # on the meta device nothing is computed: a table made on the CPU would fail to mix in
    x = torch.empty(2, 3, 4, 8, device="meta")
    assert apply_rope(x, torch.arange(4), layout="interleaved").device.type == "meta"


@pytest.mark.parametrize("options, words", [
    (dict(layout="pairs"), "layout"), (dict(scaling="ntk"), "scaling"),
    (dict(scaling="linear", factor=0.5), "factor"), (dict(scaling="dynamic"), "trained_len")])
def test_rope_rejects_unknown_layouts_and_scalings(options, words):
    with pytest.raises(ValueError, match=words):
        apply_rope(torch.randn(4, 8), torch.arange(4), **options)


# --- longer contexts: position interpolation and dynamic NTK, against transformers --------

def hf_rope(head_dim, base, rope_type, factor, max_positions, positions, q, k):
    from transformers import LlamaConfig
    params = {"rope_type": rope_type, "rope_theta": base}
    if rope_type != "default":
        params["factor"] = factor
    config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4,
                         max_position_embeddings=max_positions, rope_parameters=params)
    cos, sin = LlamaRotaryEmbedding(config)(q, positions[None, :])
    return apply_rotary_pos_emb(q, k, cos, sin)


@pytest.mark.parametrize("rope_type, scaling", [("linear", "linear"), ("dynamic", "dynamic")])
@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("length", [16, 64, 100])  # below, at 4x and beyond the trained 16
def test_rope_scaling_equals_transformers_rope_parameters(rope_type, scaling, factor, length):
    head_dim, base, trained = 16, 10000.0, 16
    q, k = torch.randn(1, 4, length, head_dim), torch.randn(1, 2, length, head_dim)
    positions = torch.arange(length)
    q_hf, k_hf = hf_rope(head_dim, base, rope_type, factor, trained, positions, q, k)
    options = dict(scaling=scaling, factor=factor, trained_len=trained)
    torch.testing.assert_close(apply_rope(q, positions, base, **options), q_hf)
    torch.testing.assert_close(apply_rope(k, positions, base, **options), k_hf)


def test_dynamic_scaling_of_a_cached_step_takes_its_base_from_the_largest_position():
    # one new token at position 12 of a model trained on 8: the base must be scaled for
    # 13 positions, as transformers does, though the call holds a single position
    head_dim, base, trained = 16, 10000.0, 8
    q, k = torch.randn(1, 4, 1, head_dim), torch.randn(1, 2, 1, head_dim)
    positions = torch.tensor([12])
    q_hf, k_hf = hf_rope(head_dim, base, "dynamic", 2.0, trained, positions, q, k)
    options = dict(scaling="dynamic", factor=2.0, trained_len=trained)
    torch.testing.assert_close(apply_rope(q, positions, base, **options), q_hf)
    torch.testing.assert_close(apply_rope(k, positions, base, **options), k_hf)
    assert not torch.allclose(apply_rope(q, positions, base), q_hf)  # the base did change


def test_dynamic_scaling_leaves_the_trained_range_alone_and_linear_does_not():
    x = torch.randn(2, 10, 16, dtype=torch.float64)
    positions = torch.arange(10)
    plain = apply_rope(x, positions)
    torch.testing.assert_close(apply_rope(x, positions, scaling="dynamic", factor=2.0,
                                          trained_len=16), plain)
    assert not torch.allclose(apply_rope(x, positions, scaling="linear", factor=2.0), plain)


def test_linear_scaling_puts_position_2p_where_p_was():
    x = torch.randn(3, 16, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, torch.tensor([0, 10, 40]), scaling="linear", factor=2.0),
                               apply_rope(x, torch.tensor([0, 5, 20])))


@pytest.mark.parametrize("rope_type", ["linear", "dynamic"])
def test_gpt_from_a_llama_with_scaled_rope_gives_its_logits_beyond_the_trained_length(rope_type):
    from transformers import LlamaConfig, LlamaForCausalLM

    from mha import GPT
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16,
                         initializer_range=0.3,  # large weights: the angles move the logits a lot
                         rope_parameters={"rope_type": rope_type, "rope_theta": 10000.0,
                                          "factor": 2.0})
    hf = LlamaForCausalLM(config).eval()
    ours = GPT.from_transformers(hf).eval()
    assert (ours.config.rope_scaling, ours.config.rope_factor) == (rope_type, 2.0)
    tokens = torch.randint(0, 64, (2, 48))  # 3x the trained length
    with torch.no_grad():
        torch.testing.assert_close(ours(tokens), hf(tokens).logits, atol=1e-4, rtol=1e-4)
