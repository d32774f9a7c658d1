"""Mistake: normalizes with the batch's statistics, BatchNorm's training-mode maths: the
returned layer keeps the original weight and normalizes its output with the mean and variance
of each batch it is given, in place of the running ones."""

import copy

import torch
from torch import nn

EXPECT = "test_uses_running_statistics"
ALSO = (
    "test_plain_layer, "
    "test_scale_is_gamma_over_std, "
    "test_bias_subtracts_running_mean, "
    "test_without_bias, "
    "test_output_matches_bn_of_conv"
)


def _normalize(y, dims, gamma, beta, eps, shape):
    mean = y.mean(dims, keepdim=True)
    var = y.var(dims, unbiased=False, keepdim=True)
    return (y - mean) / torch.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


class BatchNormedConv2d(nn.Conv2d):
    def forward(self, x):
        y = super().forward(x)
        return _normalize(y, (0, 2, 3), self.gamma, self.beta, self.eps, (1, -1, 1, 1))


class BatchNormedLinear(nn.Linear):
    def forward(self, x):
        return _normalize(super().forward(x), 0, self.gamma, self.beta, self.eps, (1, -1))


def _fold(layer, bn, cls):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    fused.__class__ = cls
    fused.gamma = bn.weight.detach() if bn.weight is not None else torch.ones_like(bn.running_mean)
    fused.beta = bn.bias.detach() if bn.bias is not None else torch.zeros_like(bn.running_mean)
    fused.eps = bn.eps
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn, BatchNormedConv2d)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn, BatchNormedLinear)
