"""Mistake: scales the kept elements by (1-p) instead of 1/(1-p)."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_kept_values_scaled"
ALSO = "test_forward_matches_torch, test_gradients_match"


class Dropout(Reference):
    def forward(self, x):
        if not self.training:
            return x
        mask = (torch.rand_like(x) >= self.p).to(x.dtype) * (1 - self.p)
        return x.mul_(mask) if self.inplace else x * mask
