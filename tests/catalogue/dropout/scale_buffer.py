"""Mistake: keeps the scale 1/(1-p) in a registered buffer, which lands in the state_dict."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_state_dict_round_trip"
ALSO = "test_to_dtype"


class Dropout(Reference):
    def __init__(self, p=0.5, inplace=False):
        super().__init__(p, inplace)
        self.register_buffer("scale", torch.tensor(0.0 if p == 1 else 1 / (1 - p)))

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        mask = (torch.rand_like(x) >= self.p).to(x.dtype) * self.scale
        return x.mul_(mask) if self.inplace else x * mask
