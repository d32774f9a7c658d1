"""Mistake: never checks that C is divisible by G; GroupNorm(4, 6) builds and fails later."""

import torch
from torch import nn

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_indivisible_channels_raise"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        nn.Module.__init__(self)
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        self.weight = nn.Parameter(torch.ones(num_channels)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_channels)) if affine else None
