"""Mistake: takes each group's statistics over its channels only, separately at every position.

Reshaping to (N, G, C/G, *) and reducing over dim 2 alone forgets the spatial dims: with G = 1
that is not LayerNorm over (C, H, W), and with G = C every value normalizes to zero.
"""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_one_and_c_groups"
ALSO = "test_forward_matches_torch, test_gradients_match"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        mean = g.mean(2, keepdim=True)
        var = g.var(2, keepdim=True, unbiased=False)
        y = ((g - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
