"""Mistake: `self.momentum or 0.1` in the update, so a momentum of 0.0 moves the running
statistics by a tenth of each batch, where torch leaves them as they were."""

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_several_steps_then_eval"


class Mistake:
    def _update_running_stats(self, mean, var, n):
        momentum, self.momentum = self.momentum, self.momentum or 0.1
        try:
            super()._update_running_stats(mean, var, n)
        finally:
            self.momentum = momentum


class BatchNorm1d(Mistake, Reference1d):
    pass


class BatchNorm2d(Mistake, Reference2d):
    pass
