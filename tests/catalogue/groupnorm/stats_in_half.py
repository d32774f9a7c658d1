"""Mistake: no upcast for half inputs: each group's mean and variance are computed and rounded
in float16/bfloat16. On ordinary data that costs an ulp or two; on x = 384 + randn (float16)
a group mean rounded to float16 is off by up to 1/8 of the spread, and every value with it."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_half_precision"
SAYS = "on x = 384 + randn"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        dims = tuple(range(2, g.dim()))
        mean = g.mean(dims, keepdim=True)
        var = (g - mean).square().mean(dims, keepdim=True)
        y = ((g - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
