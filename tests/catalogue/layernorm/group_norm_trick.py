"""Mistake: LayerNorm through the built-in group_norm with one group (still a built-in norm)."""

import torch.nn.functional as F

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_from_scratch"


class LayerNorm(Reference):
    def forward(self, x):
        flat = x.reshape(-1, 1, *self.normalized_shape)
        y = F.group_norm(flat, 1, eps=self.eps).reshape(x.shape)
        return (
            y if self.weight is None else y * self.weight + (0 if self.bias is None else self.bias)
        )
