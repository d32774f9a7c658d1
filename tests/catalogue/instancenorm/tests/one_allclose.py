"""A weak attempt: one comparison with nn.InstanceNorm2d, default options, on one input."""

import torch
from torch import nn

CATCHES = "unbiased_variance, batch_statistics, layernorm_statistics"
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """InstanceNorm2d(3) gives nn.InstanceNorm2d(3)'s output."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, 5)
    torch.testing.assert_close(kata.InstanceNorm2d(3)(x), nn.InstanceNorm2d(3)(x))
