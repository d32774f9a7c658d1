"""Mistake: scales survivors by a hard-coded 2, which is 1/(1-p) only for the default p=0.5."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_kept_values_scaled"
ALSO = "test_gradients_match"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 2.0
        mask = (torch.rand_like(x) >= self.p).to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
