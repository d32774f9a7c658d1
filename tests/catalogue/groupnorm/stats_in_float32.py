"""Mistake: always computes in float32 (x.float()), also for a float64 input.

A dtype policy, not a formula mistake (torch computes a float64 input in float64): the
interview core passes.
"""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_computes_in_float64"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.float().reshape(n, self.num_groups, c // self.num_groups, -1)
        mean = g.mean((2, 3), keepdim=True)
        var = (g - mean).square().mean((2, 3), keepdim=True)
        y = ((g - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.float().view(shape) + self.bias.float().view(shape)
        return y.to(x.dtype)
