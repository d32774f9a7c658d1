"""Mistake: bias=False is ignored; a bias parameter is always created."""

import torch
from torch import nn

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_no_bias"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, eps, elementwise_affine, True)
        if elementwise_affine and not bias:
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
