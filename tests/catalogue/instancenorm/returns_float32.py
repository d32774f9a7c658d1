"""Mistake: upcasts every input to float32 and returns float32, whatever dtype came in."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_output_like_input"
ALSO = "test_forward_matches_torch"


class Mistake:
    def _normalize(self, x):
        return super()._normalize(x.float())


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
