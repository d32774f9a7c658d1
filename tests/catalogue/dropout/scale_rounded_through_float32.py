"""Mistake: the mask and its scale built in float32 whatever x's dtype, then multiplied into a
float64 x: the kept elements are x times a float32 1 / (1 - p), off by parts in 1e8, where
nn.Dropout computes in x's dtype."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_to_dtype"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = (torch.rand_like(x, dtype=torch.float32) >= self.p).float() * scale
        return x.mul_(mask.to(x.dtype)) if self.inplace else x * mask.to(x.dtype)
