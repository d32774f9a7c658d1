"""Mistake: applies 1/(1-p) through .data, so the gradient misses the scale."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_gradients_match"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        out = x * (torch.rand_like(x) >= self.p).to(x.dtype)
        out.data.mul_(scale)
        return x.copy_(out) if self.inplace else out
