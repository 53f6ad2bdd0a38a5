"""Mixed precision on the CPU: bf16 training matches fp32, and attention in bf16/fp16
never turns a fully masked row into NaN.

A query whose keys are all masked (a padding row, or a batch row with no real token) has
scores that are all -inf; softmax of all -inf is 0/0 = NaN, and in half precision the
usual "large negative number" trick overflows too. The course's attention returns zero
weights and a zero output for such a row in float32; these tests check it in bfloat16 and
float16 as well, under autocast and with the weights themselves cast.

Tolerances: bfloat16 keeps 8 bits of mantissa (relative step 2^-8 ~ 4e-3), float16 11 bits
(~5e-4); outputs of a few matrix products are compared with 5e-2 and 5e-3.
"""
import math

import pytest
import torch

import mha
from mha import GPT, GPTConfig, MultiHeadAttention, padding_mask
from mha.course.corpus import train_lm

LOW = {torch.bfloat16: dict(atol=5e-2, rtol=5e-2), torch.float16: dict(atol=5e-3, rtol=5e-3)}
LOW_IDS = ["bf16", "fp16"]


def masked_batch():
    """q, k, v ``[B=2, H=4, L=S=5, d_k=8]`` and a mask whose query 2 of row 1 sees no key."""
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 5, 8).unbind(0)
    mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    mask[1, :, 2] = False
    return q, k, v, mask


@pytest.mark.parametrize("dtype", LOW, ids=LOW_IDS)
def test_attention_in_low_precision_gives_a_fully_masked_row_zero_weights_not_nan(dtype):
    q, k, v, mask = masked_batch()
    expected_out, expected_weights = mha.scaled_dot_product_attention(q, k, v, mask)
    low = [t.to(dtype).requires_grad_() for t in (q, k, v)]
    out, weights = mha.scaled_dot_product_attention(*low, mask)
    assert out.dtype == dtype and not out.isnan().any() and not weights.isnan().any()
    assert torch.all(weights[1, :, 2] == 0) and torch.all(out[1, :, 2] == 0)
    torch.testing.assert_close(out.float(), expected_out, **LOW[dtype])
    torch.testing.assert_close(weights.float(), expected_weights, **LOW[dtype])
    out.float().square().sum().backward()  # training through a masked row: finite gradients
    assert all(torch.isfinite(t.grad).all() for t in low)


@pytest.mark.parametrize("dtype", LOW, ids=LOW_IDS)
@pytest.mark.parametrize("how", ["autocast", "cast"])
@pytest.mark.parametrize("need_weights", [False, True], ids=["fused", "explicit"])
def test_multi_head_attention_in_low_precision_has_no_nan_for_an_all_padding_row(dtype, how, need_weights):
    torch.manual_seed(0)
    module = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)
    mask = padding_mask(torch.tensor([5, 0]), 5)  # row 1 is padding only: no key at all
    with torch.no_grad():
        expected, _ = module(x, mask=mask, need_weights=need_weights)
        if how == "autocast":
            with torch.autocast("cpu", dtype=dtype):
                out, _ = module(x, mask=mask, need_weights=need_weights)
        else:
            out, _ = module.to(dtype)(x.to(dtype), mask=mask, need_weights=need_weights)
    assert out.dtype == dtype and not out.isnan().any()
    torch.testing.assert_close(out.float(), expected, **LOW[dtype])


def markov_ids(seed: int, vocab: int = 32, n: int = 4000) -> torch.Tensor:
    """A learnable sequence: token t+1 = 5 * token t + 3 (mod V), plus 1 a quarter of the time.

    Its entropy is that of a 1/4 coin, 0.56 nats per token; a model that learned nothing
    scores log V = 3.47.
    """
    g = torch.Generator().manual_seed(seed)
    noise = (torch.randint(0, 4, (n,), generator=g) == 0).long().tolist()
    ids = [0]
    for bump in noise:
        ids.append((5 * ids[-1] + 3 + bump) % vocab)
    return torch.tensor(ids)


@pytest.mark.slow
def test_bf16_training_reaches_the_fp32_loss():
    """Same model, data and seed: the mean loss of the last 10 of 60 steps in bf16 is within
    0.02 nats of fp32's (measured here over 3 seeds at 80 steps: |difference| <= 4e-4),
    and both learned (far below log V = 3.47)."""
    ids = markov_ids(0)
    final = {}
    for precision in ("fp32", "bf16"):
        torch.manual_seed(0)
        model = GPT(GPTConfig(32, 32, 32, 4, 2, 64))
        history = train_lm(model, ids, steps=60, batch_size=8, length=24, lr=1e-2, seed=0,
                           progress=False, device="cpu", precision=precision)
        final[precision] = sum(history["loss"][-10:]) / 10
    assert final["fp32"] < 0.5 * math.log(32)
    assert abs(final["bf16"] - final["fp32"]) < 0.02, final


def test_one_bf16_training_step_is_close_to_fp32():
    """The fast check of the same: one step's loss and updated weights."""
    ids = markov_ids(1)
    models, losses = [], []
    for precision in ("fp32", "bf16"):
        torch.manual_seed(0)
        model = GPT(GPTConfig(32, 16, 16, 2, 1, 32))
        losses.append(train_lm(model, ids, steps=1, batch_size=4, length=12, progress=False,
                               device="cpu", precision=precision)["loss"][0])
        models.append(model)
    assert abs(losses[1] - losses[0]) < 0.02
    for p32, p16 in zip(*(m.parameters() for m in models)):
        assert p16.dtype == torch.float32  # autocast keeps float32 master weights
        # Adam's first step moves every weight by about +-lr = 3e-3 (the sign of its
        # gradient); where bf16 rounds a tiny gradient to the other sign, 2 lr apart
        torch.testing.assert_close(p16, p32, atol=2 * 3e-3 * 1.01, rtol=0)


@pytest.mark.parametrize("dtype", LOW, ids=LOW_IDS)
@pytest.mark.parametrize("positions", ["learned", "rope", "alibi"])
def test_a_gpt_cast_to_low_precision_matches_float32(dtype, positions):
    """Casting the whole model (``model.to(torch.bfloat16)``, no autocast) must work too:
    every table built inside the forward pass follows the input's dtype."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(23, 16, 16, 4, 2, 32, positions=positions)).eval()
    tokens = torch.randint(0, 23, (2, 9))
    with torch.no_grad():
        expected = model(tokens)
        model.to(dtype)
        for need_weights in (False, True):
            out = model(tokens, need_weights=need_weights)
            out = out[0] if need_weights else out
            assert out.dtype == dtype and not out.isnan().any()
            torch.testing.assert_close(out.float(), expected, **LOW[dtype])
        cached = mha.generate(model, tokens[:, :3], 4, temperature=0)
        assert torch.equal(cached, mha.generate(model, tokens[:, :3], 4, temperature=0, use_cache=False))
