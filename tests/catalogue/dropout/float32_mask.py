"""Mistake: the mask is made float32 with .float(), which promotes a float16 input to float32
and rounds a float64 input's scale 1 / (1 - p) through float32."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_to_dtype"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        mask = (torch.rand_like(x) >= self.p).float() * scale
        return x.mul_(mask) if self.inplace else x * mask
