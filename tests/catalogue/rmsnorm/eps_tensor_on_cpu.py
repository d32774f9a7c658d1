"""Mistake: builds the eps tensor with torch.full(...) inside forward, on the CPU."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_follows_device"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        ms = xf.square().mean(dims, keepdim=True)
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(ms + torch.full(ms.shape, eps, dtype=ms.dtype))
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
