"""Mistake: Var = E[x²] - E[x]², which loses all precision in float32 when the mean is large."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_numerically_stable"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, -1)
        mean = g.mean((2, 3), keepdim=True)
        var = (g * g).mean((2, 3), keepdim=True) - mean * mean
        y = ((g - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
