"""Mistake: keeps the scale 1/(1-p) as a frozen nn.Parameter: torch's Dropout has no parameters."""

import torch
from torch import nn

from solutions.dropout import Dropout as Reference

EXPECT = "test_attributes"
ALSO = "test_state_dict_round_trip, test_to_dtype"


class Dropout(Reference):
    def __init__(self, p=0.5, inplace=False):
        super().__init__(p, inplace)
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        self.scale = nn.Parameter(torch.tensor(scale), requires_grad=False)

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        mask = (torch.rand_like(x) >= self.p).to(x.dtype) * self.scale.to(x.dtype)
        return x.mul_(mask) if self.inplace else x * mask
