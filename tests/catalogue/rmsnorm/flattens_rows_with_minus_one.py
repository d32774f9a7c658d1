"""Mistake: flattens the normalized dimensions with reshape(*lead, -1): -1 is ambiguous, so an
error, when a leading dimension is 0."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_empty_batch"


class RMSNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        rows = x.reshape(*x.shape[: x.dim() - n], -1)
        xf = rows.float() if x.dtype in (torch.float16, torch.bfloat16) else rows
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = (xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)).reshape(x.shape)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
