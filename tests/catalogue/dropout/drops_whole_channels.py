"""Mistake: one draw per (sample, channel), broadcast over the rest: Dropout2d, not Dropout."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_elements_dropped_independently"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        shape = (*x.shape[:2], *[1] * (x.dim() - 2))  # (N, C, 1, ...)
        channels = torch.rand(shape, device=x.device) >= self.p
        mask = channels.to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
