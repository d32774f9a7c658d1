"""Mistake: mean and variance computed from x.detach(), so gradients skip the statistics."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.detach().mean(dims, keepdim=True)
        var = x.detach().var(dims, keepdim=True, unbiased=False)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
