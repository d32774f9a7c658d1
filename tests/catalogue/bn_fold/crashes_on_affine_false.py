"""Mistake: uses the BatchNorm's weight and bias as they are: built with affine=False they are
None, and None / a tensor raises a TypeError."""

import copy

import torch
from torch import nn

EXPECT = "test_affine_false"
ALSO = "test_output_matches_bn_of_conv"


def _fold(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    w = layer.weight * scale.reshape(-1, *[1] * (layer.weight.dim() - 1))
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    b = (b - bn.running_mean) * scale + bn.bias
    fused.bias = nn.Parameter(b.detach(), layer.weight.requires_grad)
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
