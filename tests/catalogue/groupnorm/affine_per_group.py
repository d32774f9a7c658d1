"""Mistake: one weight and one bias per group (shape (G,)) instead of per channel."""

import torch
from torch import nn

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_forward_matches_torch, test_gradients_match"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__(num_groups, num_channels, eps, affine)
        if affine:
            self.weight = nn.Parameter(torch.ones(num_groups))
            self.bias = nn.Parameter(torch.zeros(num_groups))

    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, -1)
        mean = g.mean((2, 3), keepdim=True)
        var = g.var((2, 3), keepdim=True, unbiased=False)
        g = (g - mean) / torch.sqrt(var + self.eps)
        if self.affine:
            g = g * self.weight.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)
        return g.reshape(x.shape)
