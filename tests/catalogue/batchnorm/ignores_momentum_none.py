"""Mistake: momentum=None falls back to 0.1 instead of the cumulative average."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_cumulative_average_momentum_none"


class DefaultMomentum:
    def _update_running_stats(self, mean, var, n):
        self.num_batches_tracked.add_(1)
        if n == 0:
            return
        m = 0.1 if self.momentum is None else self.momentum
        with torch.no_grad():
            self.running_mean.mul_(1 - m).add_(m * mean)
            self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))


class BatchNorm1d(DefaultMomentum, Reference1d):
    pass


class BatchNorm2d(DefaultMomentum, Reference2d):
    pass
