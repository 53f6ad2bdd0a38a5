"""RMSNorm against torch.nn.RMSNorm, transformers' LlamaRMSNorm and a hand-worked example."""
import math

import pytest
import torch
import torch.nn as nn
from hypothesis import given
from hypothesis import strategies as st
from transformers.models.llama.modeling_llama import LlamaRMSNorm

from mha import RMSNorm


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), d=st.integers(1, 12),
       eps=st.sampled_from([1e-6, 1e-5, 1e-2, 0.5]), seed=st.integers(0, 2**16))
def test_rmsnorm_matches_torch(shape, d, eps, seed):
    torch.manual_seed(seed)
    ours = RMSNorm(d, eps=eps).double()
    theirs = nn.RMSNorm(d, eps=eps, dtype=torch.float64)
    with torch.no_grad():
        ours.weight.normal_(1.0, 0.3)
        theirs.weight.copy_(ours.weight)
    x = torch.randn(*shape, d, dtype=torch.float64) * 3 + 1
    torch.testing.assert_close(ours(x), theirs(x))


def test_rmsnorm_starts_with_weight_ones_and_no_bias():
    norm = RMSNorm(5)
    torch.testing.assert_close(norm.weight.data, torch.ones(5))
    assert [name for name, _ in norm.named_parameters()] == ["weight"]
    assert norm.eps == 1e-6


def test_rmsnorm_by_hand():
    # x = [3, 4]: mean of squares 12.5, so the output is x / sqrt(12.5) (eps negligible)
    out = RMSNorm(2, eps=0.0)(torch.tensor([[3.0, 4.0]]))
    torch.testing.assert_close(out, torch.tensor([[3.0, 4.0]]) / math.sqrt(12.5))


def test_rmsnorm_keeps_the_mean_unlike_layernorm():
    x = torch.tensor([[1.0, 2.0, 3.0]])
    assert RMSNorm(3)(x).mean().item() > 0.5  # LayerNorm would give mean 0


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rmsnorm_in_half_precision_equals_llama_rmsnorm_and_keeps_dtype(dtype):
    ours, theirs = RMSNorm(16, eps=1e-5), LlamaRMSNorm(16, eps=1e-5)
    with torch.no_grad():
        ours.weight.normal_(1.0, 0.3)
        theirs.weight.copy_(ours.weight)
    ours, theirs = ours.to(dtype), theirs.to(dtype)
    x = (torch.randn(3, 7, 16) * 50).to(dtype)
    out = ours(x)
    assert out.dtype == dtype
    torch.testing.assert_close(out, theirs(x), atol=0, rtol=0)


def test_rmsnorm_computes_in_float32_so_large_half_inputs_do_not_overflow():
    x = torch.full((1, 8), 300.0, dtype=torch.float16)  # 300^2 = 90000 > float16 max 65504
    out = RMSNorm(8).half()(x)
    torch.testing.assert_close(out, torch.ones(1, 8, dtype=torch.float16))


def test_rmsnorm_rejects_the_wrong_width():
    with pytest.raises(ValueError, match="d=4"):
        RMSNorm(4)(torch.randn(2, 5))
