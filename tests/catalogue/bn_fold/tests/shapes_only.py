"""A weak test file: checks only the shapes (and the dtype) of what the fold returns, never a
value: the learner's first attempt, run once on default-built modules."""

import torch
from torch import nn

CATCHES = (
    "linear_scale_along_inputs, forgets_stride_and_groups, returns_sequential, "
    "linear_scale_shaped_for_conv"
)
FALSE_ALARMS = ""


def test_conv_output_shape(kata):
    conv = nn.Conv2d(3, 8, 3, padding=1).eval()
    bn = nn.BatchNorm2d(8).eval()
    fused = kata.fuse_conv_bn_eval(conv, bn)
    out = fused(torch.randn(2, 3, 16, 16))
    assert out.shape == (2, 8, 16, 16)
    assert out.dtype == torch.float32


def test_conv_weight_shape(kata):
    conv = nn.Conv2d(3, 8, 3, padding=1).eval()
    bn = nn.BatchNorm2d(8).eval()
    fused = kata.fuse_conv_bn_eval(conv, bn)
    assert fused.weight.shape == conv.weight.shape
    assert fused.bias.shape == (8,)


def test_linear_output_shape(kata):
    linear = nn.Linear(16, 10).eval()
    bn = nn.BatchNorm1d(10).eval()
    fused = kata.fuse_linear_bn_eval(linear, bn)
    assert fused(torch.randn(4, 16)).shape == (4, 10)
