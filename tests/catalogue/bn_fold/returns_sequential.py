"""Mistake: returns the two layers in an nn.Sequential instead of folding them: the same
numbers, but two layers still run, and the caller expected a Conv2d."""

import copy

from torch import nn

EXPECT = "test_returns_layer_like_the_original"
ALSO = (
    "test_scale_along_output_channels, "
    "test_originals_untouched, "
    "test_uses_running_statistics, "
    "test_plain_layer, "
    "test_scale_is_gamma_over_std, "
    "test_eps_inside_sqrt, "
    "test_bias_subtracts_running_mean, "
    "test_without_bias, "
    "test_affine_false, "
    "test_output_matches_bn_of_conv"
)


def fuse_conv_bn_eval(conv, bn):
    return nn.Sequential(copy.deepcopy(conv), copy.deepcopy(bn)).eval()


def fuse_linear_bn_eval(linear, bn):
    return nn.Sequential(copy.deepcopy(linear), copy.deepcopy(bn)).eval()
