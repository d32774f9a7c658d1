"""Mistake: no upcast for half inputs: the mean and variance are computed and rounded in
float16/bfloat16. On ordinary data that costs an ulp or two; on x = 384 + randn (float16) the
row mean rounded to float16 is off by up to 1/8 of the spread, and every x̂ with it."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_half_precision"
SAYS = "on x = 384 + randn"


class LayerNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        dims = tuple(range(-n, 0))
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        y = (x - mean) * torch.rsqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y
