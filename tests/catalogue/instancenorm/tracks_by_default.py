"""Mistake: track_running_stats=True by default, as BatchNorm's."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_no_running_stats_by_default"


class Mistake:
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=True
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
