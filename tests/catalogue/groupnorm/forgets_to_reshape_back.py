"""Mistake: returns the grouped view (N, G, C/G, *) without reshaping back to (N, C, *)."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_output_like_input"
ALSO = "test_forward_matches_torch, test_gradients_match"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        dims = tuple(range(2, g.dim()))
        mean = g.mean(dims, keepdim=True)
        var = (g - mean).square().mean(dims, keepdim=True)
        y = (g - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            shape = (1, self.num_groups, c // self.num_groups) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
