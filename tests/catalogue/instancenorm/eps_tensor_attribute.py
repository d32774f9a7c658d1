"""Mistake: caches eps as a float32 tensor in a plain attribute, which .to() does not move."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_to_dtype"


class Mistake:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        self.eps_tensor = torch.tensor(self.eps)

    def _normalize(self, x):
        eps, self.eps = self.eps, self.eps_tensor
        try:
            return super()._normalize(x)
        finally:
            self.eps = eps


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
