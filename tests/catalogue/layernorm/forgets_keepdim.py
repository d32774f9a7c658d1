"""Mistake: reduces without keepdim, so the statistics of shape (N,) do not broadcast against x.

The first forward check crashes with a broadcast error: the report hints at keeping the reduced
dims (the stub's pitfall), not at the check's own subject.
"""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_output_like_input"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims)
        var = ((x - mean) ** 2).mean(dims)
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y
