"""Mistake: elementwise_affine=False still creates weight and bias (frozen at 1 and 0)."""

import torch
from torch import nn

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_no_elementwise_affine"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, eps, True, bias)
        self.elementwise_affine = elementwise_affine
        if not elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape), requires_grad=False)
