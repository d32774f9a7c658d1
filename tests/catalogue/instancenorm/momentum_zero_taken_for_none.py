"""Mistake: `self.momentum or 0.1`, so a momentum of 0.0 given is taken for the default and the
running statistics move, where torch leaves them alone."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_momentum_none_freezes_running_stats"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        momentum, self.momentum = self.momentum, self.momentum or 0.1
        try:
            super()._update_running_stats(mean, var, m)
        finally:
            self.momentum = momentum


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
