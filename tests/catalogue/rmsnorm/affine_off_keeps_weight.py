"""Mistake: elementwise_affine=False still creates a weight (frozen at ones)."""

import torch
from torch import nn

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_no_elementwise_affine"


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, True)
        self.elementwise_affine = elementwise_affine
        if not elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape), requires_grad=False)
