"""Mistake: statistics over the batch dimension (BatchNorm's axis), not over the features."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_statistics_per_sample"
ALSO = "test_biased_variance, test_forward_matches_torch, test_gradients_match"


class LayerNorm(Reference):
    def forward(self, x):
        mean = x.mean(0, keepdim=True)
        var = x.var(0, keepdim=True, unbiased=False)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
