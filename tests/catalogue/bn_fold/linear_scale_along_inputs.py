"""Mistake: the Linear's weight times the scale vector: broadcasting lines the vector up with
the weight's last dim, in_features, so each input column is scaled instead of each output row
(and a Linear whose in_features differ from out_features fails to broadcast at all). The conv
is folded right."""

import copy

import torch
from torch import nn

EXPECT = "test_scale_along_output_channels"
ALSO = "test_scale_is_gamma_over_std, test_output_matches_bn_of_conv"


def _parts(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    return scale, ((b - bn.running_mean) * scale + beta).detach(), b.requires_grad


def fuse_conv_bn_eval(conv, bn):
    scale, bias, bias_grad = _parts(conv, bn)
    fused = copy.deepcopy(conv)
    w = conv.weight * scale.reshape(-1, 1, 1, 1)
    fused.weight = nn.Parameter(w.detach(), conv.weight.requires_grad)
    fused.bias = nn.Parameter(bias, bias_grad)
    return fused


def fuse_linear_bn_eval(linear, bn):
    scale, bias, bias_grad = _parts(linear, bn)
    fused = copy.deepcopy(linear)
    fused.weight = nn.Parameter((linear.weight * scale).detach(), linear.weight.requires_grad)
    fused.bias = nn.Parameter(bias, bias_grad)
    return fused
