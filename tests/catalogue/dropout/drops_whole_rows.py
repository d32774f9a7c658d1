"""Mistake: one draw per row, broadcast over the last dimension: whole rows are dropped."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_elements_dropped_independently"
ALSO = "test_keep_fraction"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        rows = torch.rand(*x.shape[:-1], 1, device=x.device) >= self.p
        mask = rows.to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
