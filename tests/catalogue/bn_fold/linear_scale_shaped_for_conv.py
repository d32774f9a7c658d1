"""Mistake: the scale is always reshaped to (C_out, 1, 1, 1), written for the conv and reused for
the Linear: a (out, in) weight times it broadcasts to a 4-D (out, 1, out, in) tensor."""

import copy

import torch
from torch import nn

EXPECT = "test_scale_along_output_channels"
ALSO = (
    "test_originals_untouched, "
    "test_uses_running_statistics, "
    "test_plain_layer, "
    "test_scale_is_gamma_over_std, "
    "test_eps_inside_sqrt, "
    "test_bias_subtracts_running_mean, "
    "test_without_bias, "
    "test_output_matches_bn_of_conv"
)


def _fold(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(layer)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    s = gamma / torch.sqrt(bn.running_var + bn.eps)
    w = layer.weight * s.reshape(-1, 1, 1, 1)
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    fused.bias = nn.Parameter(((b - bn.running_mean) * s + beta).detach(), b.requires_grad)
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
