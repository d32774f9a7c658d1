"""Mistake: calls the built-in F.layer_norm instead of writing the formula."""

import torch.nn.functional as F

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_from_scratch"


class LayerNorm(Reference):
    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
