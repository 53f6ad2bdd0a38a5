"""LayerNorm and BatchNorm from their formulas, against nn.LayerNorm and nn.BatchNorm1d."""
import pytest
import torch
import torch.nn as nn
from hypothesis import given
from hypothesis import strategies as st

from helpers import copy_norm
from mha import BatchNorm, LayerNorm

leading = st.lists(st.integers(1, 4), min_size=1, max_size=3)


def _perturbed(module):
    with torch.no_grad():
        module.weight.normal_(1.0, 0.3)
        module.bias.normal_(0.0, 0.3)
    return module


@given(shape=leading, d=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_layernorm_matches_torch(shape, d, seed):
    torch.manual_seed(seed)
    ours = _perturbed(LayerNorm(d).double())
    theirs = nn.LayerNorm(d, dtype=torch.float64)
    copy_norm(ours, theirs)
    x = torch.randn(*shape, d, dtype=torch.float64) * 3 + 1
    torch.testing.assert_close(ours(x), theirs(x))


def test_layernorm_output_of_a_token_ignores_other_tokens():
    norm = LayerNorm(6)
    x = torch.randn(4, 5, 6)
    y = x.clone()
    y[1:] = torch.randn(3, 5, 6) * 10
    torch.testing.assert_close(norm(x)[0], norm(y)[0])


@given(shape=leading, d=st.integers(1, 6), steps=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_batchnorm_train_and_running_stats_match_torch(shape, d, steps, seed):
    torch.manual_seed(seed)
    if torch.Size(shape).numel() < 2:
        shape = [*shape[:-1], shape[-1] + 1]
    ours = _perturbed(BatchNorm(d, momentum=0.2).double())
    theirs = nn.BatchNorm1d(d, momentum=0.2, dtype=torch.float64)
    copy_norm(ours, theirs)
    for _ in range(steps):
        x = torch.randn(*shape, d, dtype=torch.float64) * 2 + 0.5
        torch.testing.assert_close(ours(x), theirs(x.reshape(-1, d)).reshape(x.shape))
    torch.testing.assert_close(ours.running_mean, theirs.running_mean)
    torch.testing.assert_close(ours.running_var, theirs.running_var)
    ours.eval(), theirs.eval()
    x = torch.randn(*shape, d, dtype=torch.float64)
    torch.testing.assert_close(ours(x), theirs(x.reshape(-1, d)).reshape(x.shape))


def test_batchnorm_normalises_each_feature_over_batch_and_time():
    x = torch.randn(4, 7, 3) * torch.tensor([1.0, 5.0, 0.1]) + torch.tensor([2.0, -1.0, 9.0])
    y = BatchNorm(3)(x)
    torch.testing.assert_close(y.mean(dim=(0, 1)), torch.zeros(3), atol=1e-5, rtol=0)
    torch.testing.assert_close(y.var(dim=(0, 1), unbiased=False), torch.ones(3), atol=1e-3, rtol=0)


def test_batchnorm_output_of_a_sentence_depends_on_its_batch_mates():
    norm = BatchNorm(6)
    x = torch.randn(4, 5, 6)
    y = x.clone()
    y[1:] = torch.randn(3, 5, 6) * 10
    assert not torch.allclose(norm(x)[0], norm(y)[0])


def test_batchnorm_eval_uses_running_statistics():
    norm = BatchNorm(2)
    norm(torch.randn(50, 2) * 3 + 4)
    norm.eval()
    x = torch.randn(3, 2)
    expected = (x - norm.running_mean) / torch.sqrt(norm.running_var + norm.eps)
    torch.testing.assert_close(norm(x), expected)


def test_batchnorm_training_rejects_a_single_value_per_feature():
    with pytest.raises(ValueError, match=r"more than 1 value per feature.*\[1, 1, 4\]"):
        BatchNorm(4)(torch.randn(1, 1, 4))


@pytest.mark.parametrize("norm", [LayerNorm, BatchNorm])
def test_error_when_feature_count_differs(norm):
    with pytest.raises(ValueError, match=r"built for d=8 features.*last dimension is 6"):
        norm(8)(torch.randn(2, 3, 6))
