"""Mistake: the running statistics are rebound to new tensors (self.running_mean = ...) instead
of updated in place. Their values are right, but they are no longer the registered tensors, and
in a float16/bfloat16 layer they turn float32 after the first training step, being computed
from the float32 statistics (torch keeps them in the layer's dtype)."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_running_stats_updated_in_place"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        if self.momentum is None:
            return
        k = self.momentum
        with torch.no_grad():
            self.running_mean = (1 - k) * self.running_mean + k * mean.mean(0).flatten()
            self.running_var = (1 - k) * self.running_var + k * (var * (m / (m - 1))).mean(
                0
            ).flatten()


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
