"""Mistake (torch parity): the group statistics are taken of a float32 copy of x whatever its
dtype, while x itself stays float64: every output moves with x, yet the mean and variance are
rounded to float32's 7 significant digits."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_computes_in_float64"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        groups = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        dims = tuple(range(2, groups.dim()))
        work = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        copy = groups.float()
        mean = copy.mean(dims, keepdim=True)
        var = (copy - mean).square().mean(dims, keepdim=True)
        scale = torch.rsqrt(var + self.eps)
        y = ((work - mean.to(work.dtype)) * scale.to(work.dtype)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
