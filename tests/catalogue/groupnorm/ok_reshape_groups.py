"""Correct: groups the channels with reshape (a copy where x is not contiguous) into
(N, G, C/G · positions) and takes each group's statistics over its last dim."""

import math

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "pass"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        groups = x.reshape(n, self.num_groups, math.prod(x.shape[1:]) // self.num_groups)
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        var, mean = torch.var_mean(xf, dim=-1, keepdim=True, correction=0)
        y = ((xf - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
