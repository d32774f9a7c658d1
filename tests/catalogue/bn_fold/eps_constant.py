"""Mistake: eps hard-coded as 1e-5 (BatchNorm's default) instead of reading bn.eps: a BatchNorm
built with another eps (1e-3 in TF-ported and EfficientNet models) folds wrong."""

import copy

import torch
from torch import nn

EXPECT = "test_eps_inside_sqrt"
ALSO = "test_output_matches_bn_of_conv"
SAYS = "the fold does not use the BatchNorm's eps"


def _fold(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    s = gamma / torch.sqrt(bn.running_var + 1e-5)
    w = layer.weight * s.reshape(-1, *([1] * (layer.weight.dim() - 1)))
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    fused.bias = nn.Parameter(((b - bn.running_mean) * s + beta).detach(), b.requires_grad)
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
