"""Mistake: the unbiased variance (divide by N - 1), torch.var's default."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_biased_variance"
ALSO = "test_forward_matches_torch, test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean, var = x.mean(dims, keepdim=True), x.var(dims, keepdim=True)
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        return y if self.bias is None else y + self.bias
