"""Mistake: a Python loop over elements, one random draw each; right values, not vectorized."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_vectorized"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        flat = x.reshape(-1)
        out = [v * scale if torch.rand(()) >= self.p else v * 0 for v in flat]
        y = torch.stack(out).reshape(x.shape) if out else x * 0
        return x.copy_(y) if self.inplace else y
