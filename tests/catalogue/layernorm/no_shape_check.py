"""Mistake: never checks the input's trailing shape, so a mismatched input is silently accepted."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_wrong_trailing_shape_raises"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, keepdim=True, unbiased=False)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
