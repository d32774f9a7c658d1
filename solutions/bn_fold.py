"""Reference solution: fold an eval-mode BatchNorm into the Conv2d or Linear before it, as
torch.nn.utils.fusion does."""

from __future__ import annotations

import copy

import torch
from torch import nn


def _fold(module: nn.Module, bn: nn.modules.batchnorm._BatchNorm) -> nn.Module:
    """A deep copy of module (a Conv2d or a Linear) with bn folded into its weight and bias."""
    if module.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(module)
    w = module.weight
    mean, var = bn.running_mean, bn.running_var
    gamma = bn.weight if bn.weight is not None else torch.ones_like(mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(mean)
    b = module.bias if module.bias is not None else torch.zeros_like(mean)
    # eps inside the root; the scale runs along the output channels, dim 0 of the weight.
    scale = gamma * torch.rsqrt(var + bn.eps)
    new_w = w * scale.reshape(-1, *([1] * (w.dim() - 1)))
    new_b = (b - mean) * scale + beta
    fused.weight = nn.Parameter(new_w, requires_grad=w.requires_grad)
    fused.bias = nn.Parameter(new_b, requires_grad=b.requires_grad)
    return fused


def fuse_conv_bn_eval(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """A new Conv2d whose output is bn(conv(x)) in eval mode."""
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear: nn.Linear, bn: nn.BatchNorm1d) -> nn.Linear:
    """A new Linear whose output is bn(linear(x)) in eval mode."""
    return _fold(linear, bn)
