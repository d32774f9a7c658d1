"""Mistake: an unbatched (C, L) is treated as batched: range(2, 2) reduces over every dim."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_unbatched_input"
ALSO = "test_forward_matches_torch"


class Mistake:
    def forward(self, x):
        self._check_input_dim(x)
        return self._normalize(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
