"""Mistake: folds nothing into the weights: the returned layer runs the original convolution,
then the BatchNorm's scale and shift per channel. The same numbers as bn(conv(x)), and the same
two passes over the output it was meant to save."""

import copy

import torch
from torch import nn

EXPECT = "test_plain_layer"
ALSO = "test_scale_is_gamma_over_std, test_bias_subtracts_running_mean, test_without_bias"


class ScaledConv2d(nn.Conv2d):
    def forward(self, x):
        return super().forward(x) * self.scale.reshape(1, -1, 1, 1) + self.shift.reshape(
            1, -1, 1, 1
        )


class ScaledLinear(nn.Linear):
    def forward(self, x):
        return super().forward(x) * self.scale + self.shift


def _fold(layer, bn, cls):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    fused.__class__ = cls
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    scale = (gamma / torch.sqrt(bn.running_var + bn.eps)).detach()
    fused.register_buffer("scale", scale)
    fused.register_buffer("shift", (beta - bn.running_mean * scale).detach())
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn, ScaledConv2d)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn, ScaledLinear)
