"""Mistake: divides by the L2 norm sqrt(sum(x²)), forgetting the 1/H of the mean."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_root_mean_square"
ALSO = "test_forward_matches_torch, test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf / torch.sqrt(xf.square().sum(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
