"""Mistake: torch.where(keep, x / (1 - p), 0): zeros at p = 1, but a NaN gradient (0 * inf)."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_p_one_gives_zeros"


class Dropout(Reference):
    def forward(self, x):
        if not self.training:
            return x
        keep = torch.rand_like(x) >= self.p
        out = torch.where(keep, x / (1 - self.p), 0)
        return x.copy_(out) if self.inplace else out
