"""A weak test file that rejects a correct fold: besides two sound comparisons with the
modules it replaces, it folds a Linear into a BatchNorm1d built with affine=False, which the
kata does not ask (torch's own fuse_linear_bn_eval raises there, and so may a correct fold)."""

import torch
from torch import nn

CATCHES = (
    "linear_scale_along_inputs, forgets_stride_and_groups, batch_statistics, var_as_std, "
    "forgets_running_mean, linear_scale_shaped_for_conv"
)
FALSE_ALARMS = "test_linear_bn_without_affine"


def _trained(bn):
    with torch.no_grad():
        bn.running_mean.normal_()
        bn.running_var.uniform_(0.5, 2.0)
        if bn.affine:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_()
    return bn.eval()


def test_conv_matches_conv_then_bn(kata):
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 6, 3, padding=1).eval()
    bn = _trained(nn.BatchNorm2d(6))
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        want = bn(conv(x))
        got = kata.fuse_conv_bn_eval(conv, bn)(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_linear_matches_linear_then_bn(kata):
    torch.manual_seed(1)
    linear = nn.Linear(4, 6).eval()
    bn = _trained(nn.BatchNorm1d(6))
    x = torch.randn(5, 4)
    with torch.no_grad():
        want = bn(linear(x))
        got = kata.fuse_linear_bn_eval(linear, bn)(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_linear_bn_without_affine(kata):
    torch.manual_seed(2)
    linear = nn.Linear(4, 6).eval()
    bn = _trained(nn.BatchNorm1d(6, affine=False))
    x = torch.randn(5, 4)
    with torch.no_grad():
        want = bn(linear(x))
        got = kata.fuse_linear_bn_eval(linear, bn)(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
