"""Mistake: running statistics updated with autograd history (no no_grad, no detach)."""

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_running_stats_no_autograd_history"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        if self.momentum is None:
            return
        k = self.momentum
        self.running_mean = (1 - k) * self.running_mean + k * mean.mean(0).flatten()
        self.running_var = (1 - k) * self.running_var + k * (var * m / (m - 1)).mean(0).flatten()


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
