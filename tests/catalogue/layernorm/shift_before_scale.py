"""Mistake: the affine step in the wrong order, (x̂ + bias) · weight, not x̂ · weight + bias.
A constant input then gives bias · weight: the constant-input check hands it to the formula's."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_forward_matches_torch"
ALSO = "test_constant_input, test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.bias is not None:
            y = y + self.bias
        return y if self.weight is None else y * self.weight
