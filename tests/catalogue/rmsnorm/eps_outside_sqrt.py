"""Mistake: eps added after the square root, sqrt(mean(x²)) + eps."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_eps_inside_sqrt"
ALSO = "test_forward_matches_torch"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf / (torch.sqrt(xf.square().mean(dims, keepdim=True)) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
