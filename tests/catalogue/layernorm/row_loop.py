"""Mistake: a Python loop over rows; correct values, but not vectorized."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_vectorized"


class LayerNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        rows = x.reshape(-1, *self.normalized_shape)
        out = []
        for row in rows:
            mean = row.mean()
            var = ((row - mean) ** 2).mean()
            out.append((row - mean) / torch.sqrt(var + self.eps))
        y = torch.stack(out).reshape(x.shape) if out else x - x
        assert n >= 1
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
