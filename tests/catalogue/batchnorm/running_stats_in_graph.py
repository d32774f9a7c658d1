"""Mistake: running statistics updated without no_grad or detach, so they keep autograd history."""

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_running_stats_no_autograd_history"


class InGraph:
    def _update_running_stats(self, mean, var, n):
        self.num_batches_tracked.add_(1)
        if n == 0:
            return
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mean
        self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)


class BatchNorm1d(InGraph, Reference1d):
    pass


class BatchNorm2d(InGraph, Reference2d):
    pass
