"""Mistake: one draw per column, broadcast over the rows: a feature is dropped batch-wide."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_elements_dropped_independently"
ALSO = "test_keep_fraction"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        shape = (*x.shape[:-2], 1, x.shape[-1]) if x.dim() >= 2 else x.shape
        columns = torch.rand(shape, device=x.device) >= self.p
        mask = columns.to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
