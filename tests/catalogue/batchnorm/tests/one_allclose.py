"""A weak attempt: one comparison with nn.BatchNorm2d, default options, on one input in
training mode."""

import torch
from torch import nn

CATCHES = "unbiased_variance, reduces_over_batch_only_2d, eps_outside_sqrt, variance_per_position"
FALSE_ALARMS = ""


def test_matches_torch(kata):
    """BatchNorm2d(3) gives nn.BatchNorm2d(3)'s output in training mode."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5, 5)
    torch.testing.assert_close(kata.BatchNorm2d(3)(x), nn.BatchNorm2d(3)(x))
