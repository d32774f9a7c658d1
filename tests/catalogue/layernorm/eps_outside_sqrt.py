"""Mistake: eps added after the square root, sqrt(var) + eps."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_eps_inside_sqrt"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, keepdim=True, unbiased=False)
        y = (x - mean) / (torch.sqrt(var) + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
