"""Correct, written differently: rand_like compared with p, a boolean mask and a division."""

import torch
from torch import nn

EXPECT = "pass"


class Dropout(nn.Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x.zero_() if self.inplace else x * 0
        keep = torch.rand_like(x, dtype=torch.float32) > self.p  # float32 draws even for half x
        if self.inplace:
            return x.mul_(keep).div_(1 - self.p)
        return x * keep / (1 - self.p)
