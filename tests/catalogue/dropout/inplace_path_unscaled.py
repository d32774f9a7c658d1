"""Mistake: the inplace branch zeroes the dropped elements (x.mul_ by the 0/1 mask) but forgets the
1/(1 - p) scale; the out-of-place branch is right."""

import torch
from torch import nn

EXPECT = "test_inplace"


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        keep = (torch.rand_like(x) >= self.p).to(x.dtype)
        if self.inplace:
            return x.mul_(keep)
        return x * keep * scale
