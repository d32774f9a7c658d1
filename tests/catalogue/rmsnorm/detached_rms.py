"""Mistake: the RMS is computed from x.detach(), so the gradient skips the statistic."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        rstd = torch.rsqrt(xf.detach().square().mean(dims, keepdim=True) + eps)
        y = xf * rstd
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
