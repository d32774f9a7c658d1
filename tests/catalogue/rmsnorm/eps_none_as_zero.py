"""Mistake: eps=None is taken to mean no eps at all (0)."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_eps_default"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = self.eps or 0.0
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
