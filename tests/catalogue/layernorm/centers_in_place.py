"""Mistake: centres the input in place (x -= mean), overwriting the caller's tensor."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_input_unmodified"
ALSO = "test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        x -= x.mean(dims, keepdim=True)
        y = x / torch.sqrt(x.square().mean(dims, keepdim=True) + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
