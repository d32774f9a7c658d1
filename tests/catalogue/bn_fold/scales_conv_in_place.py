"""Mistake: scales the original layer's weight and bias in place and returns it: the caller's
conv is now the fused one, and running it before the BatchNorm applies the BatchNorm twice."""

import torch
from torch import nn

EXPECT = "test_originals_untouched"


def _fold(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    if layer.bias is None:
        layer.bias = nn.Parameter(torch.zeros_like(bn.running_mean))
    with torch.no_grad():
        layer.weight.mul_(scale.reshape(-1, *[1] * (layer.weight.dim() - 1)))
        layer.bias.sub_(bn.running_mean).mul_(scale).add_(beta)
    return layer


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
