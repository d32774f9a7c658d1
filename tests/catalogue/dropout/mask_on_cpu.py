"""Mistake: draws the mask with torch.rand(x.shape), which is always on the CPU."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_follows_device"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = (torch.rand(x.shape) >= self.p).to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
