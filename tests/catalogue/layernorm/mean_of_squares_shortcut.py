"""Mistake: var = E[x²] - E[x]², which cancels catastrophically in float32 when |mean| >> std."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_numerically_stable"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = (x * x).mean(dims, keepdim=True) - mean * mean
        y = (x - mean) / torch.sqrt(var + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
