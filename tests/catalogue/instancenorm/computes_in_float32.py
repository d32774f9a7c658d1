"""Mistake: computes in float32 whatever the input dtype, and casts back."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_computes_in_float64"


class Mistake:
    def _normalize(self, x):
        return super()._normalize(x.float()).to(x.dtype)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
