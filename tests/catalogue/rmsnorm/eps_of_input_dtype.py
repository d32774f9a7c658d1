"""Mistake: eps=None uses finfo of the input dtype (9.8e-4 for float16), not float32's."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_eps_default"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
