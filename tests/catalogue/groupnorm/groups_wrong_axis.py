"""Mistake: reshapes to (N, C/G, G, *), so each group is every G-th channel, not a block."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_groups_are_contiguous_channels"
ALSO = "test_forward_matches_torch, test_gradients_match"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, c // self.num_groups, self.num_groups, -1)
        mean = g.mean((1, 3), keepdim=True)
        var = g.var((1, 3), keepdim=True, unbiased=False)
        y = ((g - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
