"""Mistake: makes the stand-ins for a missing bias and a missing BatchNorm weight with
torch.zeros(n) and torch.ones(n), on the CPU: on a GPU they cannot meet the modules' tensors."""

import copy

import torch
from torch import nn

EXPECT = "test_follows_device"


def _fold(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    n = bn.num_features
    fused = copy.deepcopy(layer)
    gamma = bn.weight if bn.weight is not None else torch.ones(n, dtype=layer.weight.dtype)
    beta = bn.bias if bn.bias is not None else torch.zeros(n, dtype=layer.weight.dtype)
    b = layer.bias if layer.bias is not None else torch.zeros(n, dtype=layer.weight.dtype)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    w = layer.weight * scale.reshape(-1, *[1] * (layer.weight.dim() - 1))
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    fused.bias = nn.Parameter(((b - bn.running_mean) * scale + beta).detach(), b.requires_grad)
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
