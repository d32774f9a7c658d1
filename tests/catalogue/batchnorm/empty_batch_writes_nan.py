"""Mistake: an empty batch is folded into the running statistics, writing NaN into them."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_empty_batch"


class NoEmptyGuard:
    def _update_running_stats(self, mean, var, n):
        self.num_batches_tracked.add_(1)
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        with torch.no_grad():
            self.running_mean.mul_(1 - m).add_(m * mean)
            self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))


class BatchNorm1d(NoEmptyGuard, Reference1d):
    pass


class BatchNorm2d(NoEmptyGuard, Reference2d):
    pass
