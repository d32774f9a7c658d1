"""Mistake: builds the eps tensor with torch.full(...) inside forward, on the CPU."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_follows_device"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        y = (x - mean) / torch.sqrt(var + torch.full(var.shape, self.eps))
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
