"""Mistake: momentum=None falls back to the default 0.1."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_momentum_none_freezes_running_stats"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        k = self.momentum or 0.1
        with torch.no_grad():
            self.running_mean.mul_(1 - k).add_(k * mean.mean(0).flatten())
            self.running_var.mul_(1 - k).add_(k * (var * m / (m - 1)).mean(0).flatten())


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
