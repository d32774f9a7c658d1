"""Mistake: calls torch's own fold, torch.nn.utils.fusion, instead of writing it."""

from torch.nn.utils.fusion import fuse_conv_bn_eval as torch_fuse_conv
from torch.nn.utils.fusion import fuse_linear_bn_eval as torch_fuse_linear

EXPECT = "test_from_scratch"


def fuse_conv_bn_eval(conv, bn):
    return torch_fuse_conv(conv, bn)


def fuse_linear_bn_eval(linear, bn):
    return torch_fuse_linear(linear, bn)
