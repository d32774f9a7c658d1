"""Mistake: upcasts float16 inputs but not bfloat16 ones, so a bfloat16 input is squared,
averaged and scaled in bfloat16: an ulp or so off on a fifth of the outputs or more."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_half_precision"
SAYS = "the arithmetic ran in half precision"


class RMSNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        dims = tuple(range(-n, 0))
        xf = x.float() if x.dtype == torch.float16 else x
        eps = torch.finfo(torch.float64 if x.dtype == torch.float64 else torch.float32).eps
        eps = eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
