"""Correct: RepVGG's re-parameterization, adapted from _fuse_bn_tensor and switch_to_deploy in
DingXiaoH/RepVGG (MIT; timm's MobileOne and RepVGG blocks have the same): std = √(σ² + ε),
t = γ / std shaped (-1, 1, 1, 1), kernel · t and β − μ · γ / std, given by `.data =` to a layer
built anew. What RepVGG's convs never need is added: the layer's own bias (scaled by t), the
stand-ins where the conv has no bias or the BatchNorm no affine, the new layer's requires_grad,
eval mode, and the eval-mode guard; `.data =` carries the dtype and the device."""

import torch
from torch import nn

EXPECT = "pass"


def _fuse_bn_tensor(layer, bn):
    if layer.training or bn.training:
        raise ValueError("fold eval-mode modules only")
    kernel = layer.weight.detach()
    running_mean, running_var = bn.running_mean, bn.running_var
    gamma = bn.weight.detach() if bn.weight is not None else torch.ones_like(running_mean)
    beta = bn.bias.detach() if bn.bias is not None else torch.zeros_like(running_mean)
    bias = layer.bias.detach() if layer.bias is not None else torch.zeros_like(running_mean)
    std = (running_var + bn.eps).sqrt()
    t = (gamma / std).reshape(-1, *[1] * (kernel.dim() - 1))
    return kernel * t, beta - running_mean * gamma / std + bias * gamma / std


def _deploy(layer, fused):
    kernel, bias = _fuse_bn_tensor(*layer)
    fused.weight.data = kernel
    fused.bias.data = bias
    fused.weight.requires_grad = layer[0].weight.requires_grad
    if layer[0].bias is not None:
        fused.bias.requires_grad = layer[0].bias.requires_grad
    return fused.eval()


def fuse_conv_bn_eval(conv, bn):
    fused = nn.Conv2d(
        conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
        conv.dilation, conv.groups, bias=True, padding_mode=conv.padding_mode,
    )  # fmt: skip
    return _deploy((conv, bn), fused)


def fuse_linear_bn_eval(linear, bn):
    return _deploy((linear, bn), nn.Linear(linear.in_features, linear.out_features))
