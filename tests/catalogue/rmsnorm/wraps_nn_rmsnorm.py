"""Mistake: delegates the normalization to a built-in nn.RMSNorm submodule (without a weight)."""

import torch
from torch import nn

EXPECT = "test_from_scratch"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.inner = nn.RMSNorm(normalized_shape, eps, elementwise_affine=False)
        self.normalized_shape, self.eps = self.inner.normalized_shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        y = self.inner(x)
        return y if self.weight is None else y * self.weight
