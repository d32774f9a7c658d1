"""Mistake: always computes in float32 (x.float()), also for a float64 input.

Meant as the half-precision upcast, it also rounds float64 inputs to float32: the output then
has float32 accuracy, where nn.RMSNorm computes in float64. A dtype policy, not a formula
mistake: the interview core passes.
"""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_computes_in_float64"


class RMSNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        xf = x.float()
        eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(tuple(range(-n, 0)), keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight.float()
        return y.to(x.dtype)
