"""Mistake: always computes the statistics in float32, also for a float64 input.

Meant as the half-precision upcast, x.float() also rounds a float64 input to float32: its
output then has float32 accuracy, where nn.LayerNorm computes in float64. A dtype policy, not a
formula mistake: the interview core passes.
"""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_computes_in_float64"


class LayerNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        dims = tuple(range(-n, 0))
        xf = x.float()
        var, mean = torch.var_mean(xf, dim=dims, keepdim=True, correction=0)
        y = ((xf - mean) * torch.rsqrt(var + self.eps)).to(x.dtype)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y
