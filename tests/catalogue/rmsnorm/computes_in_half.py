"""Mistake: squares and averages in float16 itself, so x² overflows to inf above
|x| ≈ 256. Whether a layer upcasts half precision is dtype policy: the interview core passes."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_half_large_values"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = torch.finfo(torch.float32 if x.dtype != torch.float64 else x.dtype).eps
        eps = eps if self.eps is None else self.eps
        y = x * torch.rsqrt(x.square().mean(dims, keepdim=True) + eps)
        return y if self.weight is None else y * self.weight
