"""Correct, written differently: the fold as matrices, diag(s) @ W with the weight flattened to
(C_out, rest), the bias as addcmul, given to a deep copy through `.data` (the Parameters and
their requires_grad stay); a layer without a bias gets a new Parameter."""

import copy

import torch
from torch import nn

EXPECT = "pass"


def _fold(layer, bn):
    if layer.training or bn.training:
        raise RuntimeError("fold only modules in eval mode")
    fused = copy.deepcopy(layer)
    mean, var = bn.running_mean, bn.running_var
    inv_std = 1.0 / torch.sqrt(var + bn.eps)
    scale = inv_std if bn.weight is None else bn.weight.detach() * inv_std
    shift = torch.zeros_like(mean) if bn.bias is None else bn.bias.detach()
    w = layer.weight.detach()
    fused.weight.data = (torch.diag(scale) @ w.reshape(w.shape[0], -1)).reshape(w.shape)
    b = -mean if layer.bias is None else layer.bias.detach() - mean
    new_bias = torch.addcmul(shift, b, scale)
    if fused.bias is None:
        fused.bias = nn.Parameter(new_bias)
    else:
        fused.bias.data = new_bias
    return fused


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
