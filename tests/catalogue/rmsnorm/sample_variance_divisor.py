"""Mistake: divides the sum of the squares by n − 1, as for an unbiased variance, not by n."""

import math

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_root_mean_square"
ALSO = "test_forward_matches_torch, test_gradients_match"
SAYS = "not by n − 1"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        n = math.prod(self.normalized_shape)
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().sum(dims, keepdim=True) / (n - 1) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
