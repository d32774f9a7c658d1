"""Mistake: takes each group's statistics over the whole batch too (dims 0, 2, ...)."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_statistics_per_sample"
ALSO = "test_forward_matches_torch, test_gradients_match"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, -1)
        mean = g.mean((0, 2, 3), keepdim=True)
        var = g.var((0, 2, 3), keepdim=True, unbiased=False)
        y = ((g - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
