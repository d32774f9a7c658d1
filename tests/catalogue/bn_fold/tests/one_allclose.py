"""A weak test file: one comparison of the fused conv against the conv followed by the
BatchNorm, on one input, after a few training steps have given the BatchNorm running
statistics: no Linear, no layer without a bias, no other conv, nothing about the originals."""

import torch
from torch import nn

CATCHES = "forgets_stride_and_groups, batch_statistics, var_as_std, forgets_running_mean"
FALSE_ALARMS = ""


def test_fused_conv_matches_conv_then_bn(kata):
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3, padding=1)
    bn = nn.BatchNorm2d(8)
    with torch.no_grad():
        for _ in range(3):
            bn(conv(torch.randn(4, 3, 8, 8) * 2 + 1))
    conv.eval()
    bn.eval()
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        want = bn(conv(x))
        got = kata.fuse_conv_bn_eval(conv, bn)(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
