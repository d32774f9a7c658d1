"""Mistake: stores the keep probability 1 - p as self.p; forward is right, the attribute is not."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_attributes"


class Dropout(Reference):
    def __init__(self, p=0.5, inplace=False):
        super().__init__(p, inplace)
        self.p = 1 - p  # the probability of keeping

    def forward(self, x):
        if not self.training or self.p == 1:
            return x
        scale = 0.0 if self.p == 0 else 1.0 / self.p
        mask = (torch.rand_like(x) < self.p).to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
