"""Mistake: raises ValueError for a bad p, but with its own message instead of torch's.

Self-contained, as a learner writes it: the practice self-tests save it as a learner's file.
"""

import torch
from torch import nn

EXPECT = "test_invalid_p_raises"


class Dropout(nn.Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError("p must be a probability")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = (torch.rand_like(x) >= self.p).to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
