"""Mistake: centres the input in place (x.sub_), overwriting the caller's tensor."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_input_unmodified"
ALSO = "test_gradients_match"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.view(n, self.num_groups, c // self.num_groups, -1)
        g.sub_(g.mean((2, 3), keepdim=True))
        y = (g * torch.rsqrt(g.square().mean((2, 3), keepdim=True) + self.eps)).view(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
