"""Mistake: running_var takes BatchNorm's unbiased variance of all N * m values of a channel."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_running_var_unbiased_average"
ALSO = "test_forward_matches_torch, test_several_steps_then_eval"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        if self.momentum is None:
            return
        n = mean.size(0) * m
        pooled = (var + (mean - mean.mean(0, keepdim=True)).square()).mean(0).flatten()
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean.mean(0).flatten())
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * pooled * n / (n - 1))


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
