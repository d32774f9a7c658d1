"""Mistake: a half input is computed in float32 and returned as float32."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_half_precision"


class Mistake:
    def _normalize(self, x):
        if x.dtype in (torch.float16, torch.bfloat16):
            return super()._normalize(x.float())  # forgot .to(x.dtype)
        return super()._normalize(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
