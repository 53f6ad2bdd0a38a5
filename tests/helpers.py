"""Utilities for tests: copying weights between our modules and PyTorch's.

(Multi-head attention has its own, public copy: ``mha.course.references.torch_twin``.)
"""
import torch
import torch.nn as nn

import mha


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
