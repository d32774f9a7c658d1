"""Correct, written differently: an in-place Bernoulli fill of an empty_like mask, then mul."""

import torch
from torch import nn

EXPECT = "pass"


class Dropout(nn.Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        if not self.training:
            return x
        keep = 1.0 - self.p
        mask = torch.empty_like(x).bernoulli_(keep)  # 1 with probability keep, in x's dtype
        if keep > 0:
            mask.div_(keep)
        return x.mul_(mask) if self.inplace else x * mask
