"""Mistake: builds a new Conv2d from the sizes and kernel alone, forgetting the stride,
padding, dilation and groups the original was built with."""

import torch
from torch import nn

EXPECT = "test_returns_layer_like_the_original"
ALSO = "test_output_matches_bn_of_conv"


def _fold(layer, bn, fused):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    w = layer.weight * scale.reshape(-1, *[1] * (layer.weight.dim() - 1))
    fused.weight = nn.Parameter(w.detach(), layer.weight.requires_grad)
    fused.bias = nn.Parameter(((b - bn.running_mean) * scale + beta).detach(), b.requires_grad)
    return fused.to(layer.weight).eval()


def fuse_conv_bn_eval(conv, bn):
    return _fold(conv, bn, nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size))


def fuse_linear_bn_eval(linear, bn):
    return _fold(linear, bn, nn.Linear(linear.in_features, linear.out_features))
