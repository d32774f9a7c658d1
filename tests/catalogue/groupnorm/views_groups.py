"""Mistake: groups the channels with x.view(N, G, -1 as a number), which needs a contiguous
layout: a transposed input, which torch normalizes like any other, raises RuntimeError;
x.reshape copies when it must."""

import math

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_noncontiguous_input"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        size = math.prod(x.shape[1:]) // self.num_groups  # a group's values, spelled out
        groups = x.view(n, self.num_groups, size)  # the mistake: reshape would copy
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        mean = xf.mean(-1, keepdim=True)
        var = (xf - mean).square().mean(-1, keepdim=True)
        y = ((xf - mean) * torch.rsqrt(var + self.eps)).view(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
