"""Mistake: the mean of the squares runs over every dim of x, the batch's too, not per sample.

x.square().mean() without a dim is one number for the whole batch: a sample's output then
changes with the other samples, and only the batch as a whole has a root mean square of 1.
"""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_statistics_per_sample"
ALSO = "test_forward_matches_torch, test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean() + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
