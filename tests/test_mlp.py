"""GELU MLP and SwiGLU against hand-written formulas and transformers' GPT2MLP / LlamaMLP."""
import math

import pytest
import torch
import torch.nn.functional as F
from transformers import GPT2Config, LlamaConfig
from transformers.models.gpt2.modeling_gpt2 import GPT2MLP
from transformers.models.llama.modeling_llama import LlamaMLP

from mha import MLP, SwiGLU


def test_swiglu_equals_its_formula_written_by_hand():
    mlp = SwiGLU(6, 10).double()
    x = torch.randn(2, 3, 6, dtype=torch.float64)
    gate = x @ mlp.gate_proj.weight.T
    silu = gate * (1 / (1 + torch.exp(-gate)))
    expected = (silu * (x @ mlp.up_proj.weight.T)) @ mlp.down_proj.weight.T
    torch.testing.assert_close(mlp(x), expected)


def test_swiglu_has_three_projections_without_bias():
    mlp = SwiGLU(8, 20)
    assert {name: tuple(p.shape) for name, p in mlp.named_parameters()} == {
        "gate_proj.weight": (20, 8), "up_proj.weight": (20, 8), "down_proj.weight": (8, 20)}


def test_swiglu_equals_transformers_llama_mlp_with_copied_weights():
    config = LlamaConfig(hidden_size=16, intermediate_size=40, num_attention_heads=4)
    theirs = LlamaMLP(config)
    ours = SwiGLU(16, 40)
    ours.load_state_dict(theirs.state_dict())  # same names: gate_proj, up_proj, down_proj
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(ours(x), theirs(x))


def test_mlp_uses_the_tanh_approximation_of_gelu():
    mlp = MLP(4, 8).double()
    x = torch.randn(3, 4, dtype=torch.float64)
    h = mlp.fc(x)
    gelu_tanh = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))
    torch.testing.assert_close(mlp(x), mlp.proj(gelu_tanh))
    assert not torch.allclose(mlp(x), mlp.proj(F.gelu(h)), atol=1e-7, rtol=0)  # exact erf GELU differs


def test_mlp_equals_transformers_gpt2_mlp_with_copied_weights():
    config = GPT2Config(n_embd=16, resid_pdrop=0.0)
    theirs = GPT2MLP(64, config).eval()
    with torch.no_grad():
        theirs.c_fc.bias.normal_()
        theirs.c_proj.bias.normal_()
    ours = MLP(16, 64)
    with torch.no_grad():
        # transformers' Conv1D stores its weight as [in, out]; nn.Linear as [out, in]
        ours.fc.weight.copy_(theirs.c_fc.weight.T)
        ours.fc.bias.copy_(theirs.c_fc.bias)
        ours.proj.weight.copy_(theirs.c_proj.weight.T)
        ours.proj.bias.copy_(theirs.c_proj.bias)
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(ours(x), theirs(x))


@pytest.mark.parametrize("bias, expected", [(True, ["fc.weight", "fc.bias", "proj.weight", "proj.bias"]),
                                            (False, ["fc.weight", "proj.weight"])])
def test_mlp_bias_switch(bias, expected):
    assert [name for name, _ in MLP(4, 16, bias=bias).named_parameters()] == expected


def test_swiglu_at_two_thirds_width_has_the_parameters_of_a_4x_gelu_mlp():
    d = 96
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(SwiGLU(d, 2 * 4 * d // 3)) == count(MLP(d, 4 * d, bias=False))
