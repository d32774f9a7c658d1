"""Mistake: the mask is drawn as float32 whatever x's dtype, and x is multiplied by it as it
is: a float16 or bfloat16 x comes out float32 (float64 stays float64, the mask's 0 and 1
exact and the scale a Python float)."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_half_precision"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = (torch.rand_like(x, dtype=torch.float32) >= self.p).float()
        out = x * mask * scale
        return x.copy_(out) if self.inplace else out
