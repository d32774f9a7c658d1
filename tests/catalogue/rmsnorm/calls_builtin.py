"""Mistake: calls the built-in F.rms_norm (on CPU builds it decomposes before the dispatcher)."""

import torch.nn.functional as F

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_from_scratch"


class RMSNorm(Reference):
    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)
