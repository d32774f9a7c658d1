"""Mistake (torch parity): builds a fresh conv, freezes it, and copies the folded weight and
bias into its Parameters with copy_ while autograd records (YOLO's fuse_conv_and_bn, called
without torch.no_grad()): the values are right, but the fused Parameters are no leaves, their
grad_fn leads back to the originals' weights."""

import torch
from torch import nn

EXPECT = "test_folded_parameters"


def _scale(bn):
    gamma = bn.weight if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias if bn.bias is not None else torch.zeros_like(bn.running_var)
    return gamma / torch.sqrt(bn.running_var + bn.eps), beta


def fuse_conv_bn_eval(conv, bn):
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = nn.Conv2d(
        conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
        padding=conv.padding, dilation=conv.dilation, groups=conv.groups, bias=True,
        padding_mode=conv.padding_mode, device=conv.weight.device, dtype=conv.weight.dtype,
    ).requires_grad_(False)  # fmt: skip
    scale, beta = _scale(bn)
    fused.weight.copy_(conv.weight * scale.view(-1, 1, 1, 1))
    b = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    fused.bias.copy_((b - bn.running_mean) * scale + beta)
    return fused.eval()


def fuse_linear_bn_eval(linear, bn):
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = nn.Linear(
        linear.in_features, linear.out_features, bias=True, device=linear.weight.device,
        dtype=linear.weight.dtype,
    ).requires_grad_(False)  # fmt: skip
    scale, beta = _scale(bn)
    fused.weight.copy_(linear.weight * scale[:, None])
    b = linear.bias if linear.bias is not None else torch.zeros_like(bn.running_mean)
    fused.bias.copy_((b - bn.running_mean) * scale + beta)
    return fused.eval()
