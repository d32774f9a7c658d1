"""Mistake: no eps at all, so an all-zero row gives 0/0 = NaN."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_zero_input"
ALSO = "test_eps_inside_sqrt, test_forward_matches_torch"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        y = xf / xf.square().mean(dims, keepdim=True).sqrt()
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
