"""Mistake: momentum applied backwards, new = momentum * old + (1 - momentum) * batch."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_momentum_direction"
ALSO = "test_several_steps_then_eval"


class Backwards:
    def _update_running_stats(self, mean, var, n):
        self.num_batches_tracked.add_(1)
        if n == 0:
            return
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        with torch.no_grad():
            self.running_mean.mul_(m).add_((1 - m) * mean)
            self.running_var.mul_(m).add_((1 - m) * var * n / (n - 1))


class BatchNorm1d(Backwards, Reference1d):
    pass


class BatchNorm2d(Backwards, Reference2d):
    pass
