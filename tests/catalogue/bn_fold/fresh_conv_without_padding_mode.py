"""Mistake: builds the fused conv anew, as YOLOv5's fuse_conv_and_bn does, passing in/out channels,
kernel, stride, padding, dilation and groups but not padding_mode: a conv built with
padding_mode='reflect' (or 'replicate', 'circular') folds into a zero-padded conv, whose border
outputs differ from bn(conv(x))."""

import torch
from torch import nn

EXPECT = "test_returns_layer_like_the_original"


def _fill(fused, layer, bn):
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_mean)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_mean)
    b = layer.bias if layer.bias is not None else torch.zeros_like(bn.running_mean)
    s = gamma / torch.sqrt(bn.running_var + bn.eps)
    with torch.no_grad():
        fused.weight.copy_(layer.weight * s.reshape(-1, *([1] * (layer.weight.dim() - 1))))
        fused.bias.copy_((b - bn.running_mean) * s + beta)
    fused.weight.requires_grad_(layer.weight.requires_grad)
    fused.bias.requires_grad_(b.requires_grad)
    return fused.eval()


def fuse_conv_bn_eval(conv, bn):
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = nn.Conv2d(
        conv.in_channels,
        conv.out_channels,
        conv.kernel_size,
        stride=conv.stride,
        padding=conv.padding,
        dilation=conv.dilation,
        groups=conv.groups,
        bias=True,
    ).to(conv.weight.device, conv.weight.dtype)
    return _fill(fused, conv, bn)


def fuse_linear_bn_eval(linear, bn):
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = nn.Linear(linear.in_features, linear.out_features).to(
        linear.weight.device, linear.weight.dtype
    )
    return _fill(fused, linear, bn)
