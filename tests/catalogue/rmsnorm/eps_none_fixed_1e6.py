"""Mistake: eps defaults to a fixed 1e-6 (LLaMA's value), not torch's eps=None."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_eps_default"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True):
        super().__init__(normalized_shape, eps, elementwise_affine)

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + self.eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
