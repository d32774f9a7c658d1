"""Mistake: a Python loop over the groups, one slice of channels at a time."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_vectorized"


class GroupNorm(Reference):
    def forward(self, x):
        size = x.shape[1] // self.num_groups
        parts = []
        for g in range(self.num_groups):
            part = x[:, g * size : (g + 1) * size]
            dims = tuple(range(1, part.dim()))
            mean = part.mean(dims, keepdim=True)
            var = part.var(dims, keepdim=True, unbiased=False)
            parts.append((part - mean) / torch.sqrt(var + self.eps))
        y = torch.cat(parts, dim=1)
        if self.affine:
            shape = (1, -1) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
