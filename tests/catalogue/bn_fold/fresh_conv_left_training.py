"""Mistake: builds the fused layer anew, with every setting, dtype and device, and copies the
folded values in, but leaves it in training mode, where a new module starts."""

import torch
from torch import nn

EXPECT = "test_fused_in_eval_mode"


def _fold(layer, bn, fused):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    with torch.no_grad():
        fused.weight.copy_(layer.weight * scale.reshape(-1, *[1] * (layer.weight.dim() - 1)))
        fused.bias.copy_((b - bn.running_mean) * scale + beta)
    fused.weight.requires_grad_(layer.weight.requires_grad)
    fused.bias.requires_grad_(b.requires_grad)
    return fused


def fuse_conv_bn_eval(conv, bn):
    w = conv.weight
    fused = nn.Conv2d(
        conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
        padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
        padding_mode=conv.padding_mode, device=w.device, dtype=w.dtype,
    )  # fmt: skip
    return _fold(conv, bn, fused)


def fuse_linear_bn_eval(linear, bn):
    w = linear.weight
    fused = nn.Linear(linear.in_features, linear.out_features, device=w.device, dtype=w.dtype)
    return _fold(linear, bn, fused)
