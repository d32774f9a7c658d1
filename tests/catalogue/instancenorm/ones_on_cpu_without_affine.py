"""Mistake: without affine, scales by a torch.ones(C) made in forward, on the CPU."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_follows_device"


class Mistake:
    def _normalize(self, x):
        y = super()._normalize(x)
        if not self.affine:  # "weight" of ones, to share the affine code path
            shape = (1, -1) + (1,) * (x.dim() - 2)
            y = y * torch.ones(x.size(1), dtype=y.dtype).view(shape)
        return y


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
