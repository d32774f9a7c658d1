"""Mistake: num_batches_tracked incremented every training step, as BatchNorm does."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_num_batches_tracked_stays_zero"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        self.num_batches_tracked.add_(1)
        super()._update_running_stats(mean, var, m)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
