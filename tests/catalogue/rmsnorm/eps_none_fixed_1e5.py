"""Mistake: eps=None is stored as given but replaced by a fixed 1e-5 in forward."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_eps_default"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = 1e-5 if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
