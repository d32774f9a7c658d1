"""Mistake: draws the mask once and reuses it on every call with the same shape."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_fresh_mask_each_call"


class Dropout(Reference):
    mask = None

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        if self.mask is None or self.mask.shape != x.shape:
            self.mask = torch.rand_like(x) >= self.p
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = self.mask.to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
