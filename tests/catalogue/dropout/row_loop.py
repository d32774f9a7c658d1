"""Mistake: a Python loop over the rows, one random draw per row; right values, not vectorized."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_vectorized"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        rows = x.reshape(-1, x.shape[-1]) if x.dim() else x.reshape(1, 1)
        masks = [(torch.rand_like(row) >= self.p).to(x.dtype) * scale for row in rows]
        mask = torch.stack(masks).reshape(x.shape) if masks else torch.zeros_like(x)
        return x.mul_(mask) if self.inplace else x * mask
