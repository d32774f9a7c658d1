"""Mistake: num_batches_tracked is registered but never incremented."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_num_batches_tracked"
ALSO = "test_several_steps_then_eval"


class NoCount:
    def _update_running_stats(self, mean, var, n):
        if n == 0:
            return
        m = 1.0 / float(self.num_batches_tracked + 1) if self.momentum is None else self.momentum
        with torch.no_grad():
            self.running_mean.mul_(1 - m).add_(m * mean)
            self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))


class BatchNorm1d(NoCount, Reference1d):
    pass


class BatchNorm2d(NoCount, Reference2d):
    pass
