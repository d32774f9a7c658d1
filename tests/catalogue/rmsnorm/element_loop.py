"""Mistake: sums the squares one element at a time in a Python loop over the normalized
elements: right values, but its work grows with the width."""

import math

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_vectorized"


class RMSNorm(Reference):
    def forward(self, x):
        k = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - k :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        n = math.prod(self.normalized_shape)
        flat = xf.flatten(xf.dim() - k)
        total = torch.zeros_like(flat[..., :1])
        for j in range(n):
            total = total + flat[..., j : j + 1].square()
        rstd = torch.rsqrt(total / n + eps).reshape(*xf.shape[: xf.dim() - k], *(1,) * k)
        y = xf * rstd
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
