"""Mistake: calls the built-in through its torch.rms_norm alias."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_from_scratch"


class RMSNorm(Reference):
    def forward(self, x):
        return torch.rms_norm(x, list(self.normalized_shape), self.weight, self.eps)
