"""Mistake: without affine, multiplies by a torch.ones(C) made on the CPU in forward."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_follows_device"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, -1)
        mean = g.mean((2, 3), keepdim=True)
        var = g.var((2, 3), keepdim=True, unbiased=False)
        y = ((g - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        weight = self.weight if self.affine else torch.ones(c)
        bias = self.bias if self.affine else torch.zeros(c)
        shape = (1, c) + (1,) * (x.dim() - 2)
        return y * weight.view(shape) + bias.view(shape)
