"""Mistake: a Python loop over rows; correct values, but not vectorized."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_vectorized"


class RMSNorm(Reference):
    def forward(self, x):
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        rows = xf.reshape(-1, *self.normalized_shape)
        out = [row * torch.rsqrt(row.square().mean() + eps) for row in rows]
        y = torch.stack(out).reshape(x.shape) if out else xf * 0
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
