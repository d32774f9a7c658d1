"""Mistake: no check of the input's rank."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_wrong_rank_raises"


class Mistake:
    def _check_input_dim(self, x):
        pass


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
