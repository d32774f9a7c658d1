"""Mistake: where the conv has no bias, the fold reuses the BatchNorm's bias Parameter as the
fused bias and writes the folded value into it: the fused output is right, but the BatchNorm
now holds b′ instead of β, and the two modules share one tensor."""

import copy

import torch
from torch import nn

EXPECT = "test_originals_untouched"


def _fold(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    gamma = bn.weight if bn.affine else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.affine else torch.zeros_like(bn.running_var)
    scale = (gamma / torch.sqrt(bn.running_var + bn.eps)).detach()
    w = layer.weight * scale.reshape(-1, *[1] * (layer.weight.dim() - 1))
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    b = layer.bias if layer.bias is not None else torch.zeros_like(scale)
    folded = ((b - bn.running_mean) * scale + beta).detach()
    if layer.bias is None and bn.affine:
        fused.bias = bn.bias  # the BatchNorm's bias slot, reused
        fused.bias.data = folded
    else:
        fused.bias = nn.Parameter(folded, b.requires_grad)
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
