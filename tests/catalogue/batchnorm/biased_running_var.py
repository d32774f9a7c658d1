"""Mistake: running_var is updated with the biased batch variance, without the m / (m - 1)."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_running_var_unbiased"
ALSO = "test_several_steps_then_eval"


class BiasedRunningVar:
    def _update_running_stats(self, mean, var, n):
        self.num_batches_tracked.add_(1)
        if n == 0:
            return
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        with torch.no_grad():
            self.running_mean.mul_(1 - m).add_(m * mean)
            self.running_var.mul_(1 - m).add_(m * var)


class BatchNorm1d(BiasedRunningVar, Reference1d):
    pass


class BatchNorm2d(BiasedRunningVar, Reference2d):
    pass
