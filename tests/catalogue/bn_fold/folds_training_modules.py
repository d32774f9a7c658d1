"""Mistake: folds whatever it is given: a BatchNorm in training mode normalizes with each
batch's statistics, which the fold replaces by the running ones without a word. torch raises."""

import copy

import torch
from torch import nn

EXPECT = "test_training_mode_raises"


def _fold(layer, bn):
    fused = copy.deepcopy(layer)
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    w = layer.weight * scale.reshape(-1, *[1] * (layer.weight.dim() - 1))
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    fused.bias = nn.Parameter(((b - bn.running_mean) * scale + beta).detach(), b.requires_grad)
    return fused.eval()


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn)
