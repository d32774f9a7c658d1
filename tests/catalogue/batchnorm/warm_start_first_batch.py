"""Mistake: the first training batch overwrites the running statistics instead of joining them."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_first_step_from_initial_stats"
ALSO = "test_several_steps_then_eval"


class WarmStart:
    def _update_running_stats(self, mean, var, n):
        self.num_batches_tracked.add_(1)
        if n == 0:
            return
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        if int(self.num_batches_tracked) == 1:  # "better than starting from 0 and 1"
            m = 1.0
        with torch.no_grad():
            self.running_mean.mul_(1 - m).add_(m * mean)
            self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))


class BatchNorm1d(WarmStart, Reference1d):
    pass


class BatchNorm2d(WarmStart, Reference2d):
    pass
