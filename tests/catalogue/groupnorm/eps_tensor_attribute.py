"""Mistake: caches eps as a float32 tensor in a plain attribute, which .to() does not move.

Its values pass (a 0-dim tensor takes the other operand's dtype), but after .to(float64) or
.to("cuda") the module still holds a float32 tensor on the CPU that is not part of its state.
"""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_to_dtype"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__(num_groups, num_channels, eps, affine)
        self.eps_tensor = torch.tensor(eps)

    def forward(self, x):
        n, c = x.shape[:2]
        groups = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        dims = tuple(range(2, xf.dim()))
        xc = xf - xf.mean(dims, keepdim=True)
        y = (xc * torch.rsqrt(xc.square().mean(dims, keepdim=True) + self.eps_tensor)).reshape(
            x.shape
        )
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
