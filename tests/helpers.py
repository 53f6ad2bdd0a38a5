"""Utilities for tests: copying weights between our modules and PyTorch's."""
import torch
import torch.nn as nn

import mha


@torch.no_grad()
def copy_into_torch_mha(ours: mha.MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Give ``nn.MultiheadAttention`` exactly our projection weights."""
    theirs.in_proj_weight.copy_(torch.cat(
        [ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
    theirs.out_proj.weight.copy_(ours.o_proj.weight)
    if ours.q_proj.bias is not None:
        theirs.in_proj_bias.copy_(torch.cat(
            [ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        theirs.out_proj.bias.copy_(ours.o_proj.bias)


def torch_mha_like(ours: mha.MultiHeadAttention) -> nn.MultiheadAttention:
    theirs = nn.MultiheadAttention(ours.d_model, ours.num_heads, batch_first=True,
                                   bias=ours.q_proj.bias is not None,
                                   dtype=ours.q_proj.weight.dtype)
    copy_into_torch_mha(ours, theirs)
    return theirs.eval()


@torch.no_grad()
def copy_norm(ours, theirs) -> None:
    theirs.weight.copy_(ours.weight)
    theirs.bias.copy_(ours.bias)


@torch.no_grad()
def copy_feed_forward(ours: mha.FeedForward, theirs) -> None:
    theirs.linear1.load_state_dict(ours.expand.state_dict())
    theirs.linear2.load_state_dict(ours.contract.state_dict())


def randomize_norms(module: nn.Module) -> None:
    """LayerNorms start as the identity affine map; perturb them so a swap would show."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, mha.LayerNorm):
                m.weight.normal_(1.0, 0.2)
                m.bias.normal_(0.0, 0.2)


def random_mask(*shape, p_keep: float = 0.7, generator=None) -> torch.Tensor:
    return torch.rand(*shape, generator=generator) < p_keep
