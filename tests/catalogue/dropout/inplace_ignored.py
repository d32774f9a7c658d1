"""Mistake: stores inplace but always returns a new tensor, leaving x untouched."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_inplace"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        return x * (torch.rand_like(x) >= self.p).to(x.dtype) * scale
