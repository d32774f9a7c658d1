"""Mistake: keeps normalized_shape as the int it was given and initialises weight randomly."""

import torch
from torch import nn

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_parameters"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, eps, elementwise_affine, bias)
        if self.weight is not None:
            self.weight = nn.Parameter(torch.randn(self.normalized_shape))
