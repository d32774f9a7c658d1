"""Mistake: normalizes over the last dimension only, whatever normalized_shape says."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_multidim_normalized_shape"
ALSO = "test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
