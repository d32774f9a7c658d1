"""Mistake: x * mask / (1 - p) with no special case: at p = 1 it is 0 / 0 = NaN."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_p_one_gives_zeros"


class Dropout(Reference):
    def forward(self, x):
        if not self.training:
            return x
        mask = (torch.rand_like(x) >= self.p).to(x.dtype)
        out = x * mask / (1 - self.p)
        return x.copy_(out) if self.inplace else out
