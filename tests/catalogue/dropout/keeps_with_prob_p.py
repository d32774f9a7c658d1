"""Mistake: keeps each element with probability p, when p is the probability of dropping."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_keep_fraction"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = (torch.rand_like(x) < self.p).to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
