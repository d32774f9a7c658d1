"""Mistake: keeps normalized_shape as the int it was given and initialises weight randomly."""

import torch
from torch import nn

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_parameters"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, elementwise_affine)
        if self.weight is not None:
            self.weight = nn.Parameter(torch.randn(self.normalized_shape))
        if isinstance(normalized_shape, int):
            self.normalized_shape = normalized_shape
