"""mha.course.references: PyTorch's attention with our weights, RMSNorm and SwiGLU as
functions of their weights, exercise 12's searches; each checked against PyTorch, the formula
written out, a hand-worked example or mha.beam_search."""
import math

import pytest
import torch
import torch.nn.functional as F

import mha
from mha.course.references import (beam_step, exhaustive_search, list_beam_search, rms_norm, swiglu,
                                   table_model, torch_twin)


@pytest.mark.parametrize("bias", [True, False])
def test_torch_twin_gives_our_outputs_and_weights_in_cross_attention(bias):
    ours = mha.MultiHeadAttention(12, 3, bias=bias).double().eval()
    query, memory = torch.randn(2, 4, 12, dtype=torch.float64), torch.randn(2, 7, 12, dtype=torch.float64)
    out, weights = ours(query, memory, need_weights=True)             # weights [B, H, L, S]
    twin_out, twin_weights = torch_twin(ours)(query, memory, memory, average_attn_weights=False)
    torch.testing.assert_close(twin_out, out)
    torch.testing.assert_close(twin_weights, weights)


def test_torch_twin_needs_the_opposite_mask():
    ours = mha.MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    allowed = mha.causal_mask(5)                                        # True = may attend
    twin = torch_twin(ours)
    with torch.no_grad():
        torch.testing.assert_close(twin(x, x, x, attn_mask=~allowed)[0], ours(x, mask=allowed)[0])
        assert not torch.allclose(twin(x, x, x, attn_mask=allowed)[0].nan_to_num(), ours(x, mask=allowed)[0])


def test_torch_twin_is_a_copy_that_later_training_does_not_change():
    ours = mha.MultiHeadAttention(8, 2).eval()
    twin = torch_twin(ours)
    x = torch.randn(1, 3, 8)
    with torch.no_grad():
        before = twin(x, x, x)[0]
        ours.q_proj.weight.add_(1.0)
        torch.testing.assert_close(twin(x, x, x)[0], before)
    assert not twin.training
    assert twin.batch_first


@pytest.mark.parametrize("kwargs", [{"num_kv_heads": 1}, {"rope_base": 10000.0}])
def test_torch_twin_refuses_what_nn_multihead_attention_cannot_do(kwargs):
    with pytest.raises(ValueError, match="nn.MultiheadAttention has neither"):
        torch_twin(mha.MultiHeadAttention(8, 2, **kwargs))


def test_rms_norm_matches_torchs_rms_norm_with_the_same_weight():
    x, weight = torch.randn(2, 5, 8) * 3 + 1, torch.randn(8)
    for eps in (1e-6, 1e-2):
        torch.testing.assert_close(rms_norm(x, weight, eps), F.rms_norm(x, (8,), weight, eps))


def test_swiglu_is_the_gated_product_of_its_three_matrices():
    x = torch.randn(2, 5, 8)
    W_gate, W_up, W_down = torch.randn(8, 24), torch.randn(8, 24), torch.randn(24, 8)
    expected = (F.silu(x @ W_gate) * (x @ W_up)) @ W_down              # [2, 5, 8]
    torch.testing.assert_close(swiglu(x, W_gate, W_up, W_down), expected, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------- exercise 12's beam-search references

def test_table_model_reads_the_table_of_the_step_and_the_last_token():
    tables = torch.randn(3, 4, 4).log_softmax(dim=-1)                  # [T, V, V]
    model = table_model(tables)
    torch.testing.assert_close(model(torch.zeros(2, 0, dtype=torch.long)), tables[0, [0, 0]])
    torch.testing.assert_close(model(torch.tensor([[3, 1], [0, 2]])), tables[2, [1, 2]])


def test_beam_step_keeps_the_best_extensions_by_total_best_first():
    sums = torch.tensor([[-1.0, -2.5, -0.5], [-0.2, float("-inf"), float("-inf")]])
    log_probs = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0)).log_softmax(-1)
    new_sums, parents, tokens = beam_step(sums, log_probs, 4)  # row 1 has 4 live extensions
    for b in range(2):                                          # every extension, sorted by hand
        extensions = [(float(sums[b, k] + log_probs[b, k, t]), k, t) for k in range(3) for t in range(4)]
        ranked = sorted(extensions, reverse=True)[:4]
        assert new_sums[b].tolist() == pytest.approx([s for s, _, _ in ranked])
        assert parents[b].tolist() == [k for _, k, _ in ranked]
        assert tokens[b].tolist() == [t for _, _, t in ranked]


def two_step_model(first, second):
    """table_model for p(a) = first[a], p(b | a) = second[a, b]."""
    tables = torch.stack([first.expand_as(second), second]).log()        # [2, V, V]
    return table_model(tables)


def test_searches_on_a_hand_worked_trap_for_greedy_decoding():
    # greedy: token 0 (0.6), then 0 (0.55): 0.33; the best pair is (1, 0): 0.4 * 1.0
    model = two_step_model(torch.tensor([0.6, 0.4]), torch.tensor([[0.55, 0.45], [1.0, 0.0]]))
    total, tokens = exhaustive_search(model, 2, 2)
    assert tokens == [1, 0] and total == pytest.approx(math.log(0.4))
    total, tokens = list_beam_search(model, 2, beam_size=1)
    assert tokens == [0, 0] and total == pytest.approx(math.log(0.33))
    assert list_beam_search(model, 2, beam_size=2)[1] == [1, 0]


def decoder_as_model(model, src):
    """next_log_probs of a tiny mha.Transformer: the prefix follows bos (token 0) as its target."""
    def next_log_probs(prefixes):                                        # [N, t] -> [N, V]
        tgt = torch.cat([torch.zeros(len(prefixes), 1, dtype=torch.long), prefixes], dim=1)
        with torch.no_grad():
            return model(src.expand(len(prefixes), -1), tgt)[:, -1].float().log_softmax(-1)
    return next_log_probs


@pytest.mark.parametrize("beam_size", [1, 2, 16])
def test_list_beam_search_and_exhaustive_search_agree_with_mhas_beam_search(beam_size):
    # eos (token 1) made impossible: every hypothesis runs to max_len, scored by its total
    torch.manual_seed(beam_size)
    model = mha.Transformer(7, 4, d_model=16, num_heads=2, num_layers=1, d_ff=32).eval()
    with torch.no_grad():
        model.generator.bias[1] = float("-inf")
    src = torch.randint(2, 7, (1, 5), generator=torch.Generator().manual_seed(beam_size))
    tokens, scores = mha.beam_search(model, src, beam_size=beam_size, max_len=4, bos_id=0,
                                     eos_id=1, length_penalty=0.0)
    next_log_probs = decoder_as_model(model, src)
    total, ours = list_beam_search(next_log_probs, 3, beam_size)
    assert ours == tokens[0, 1:].tolist()
    assert total == pytest.approx(scores[0].item(), abs=1e-5)
    if beam_size == 16:                                # wider than the 3 ** 2 hypotheses without eos
        best_total, best = exhaustive_search(next_log_probs, 3, 4)
        assert best == ours and best_total == pytest.approx(total, abs=1e-5)
