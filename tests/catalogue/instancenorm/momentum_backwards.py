"""Mistake: momentum weighs the old value: new = momentum * old + (1 - momentum) * batch."""

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_running_mean_update"
ALSO = "test_forward_matches_torch, test_several_steps_then_eval"


class Mistake:
    def _update_running_stats(self, mean, var, m):
        if self.momentum is None:
            return
        momentum = self.momentum
        with torch.no_grad():
            batch_mean = mean.mean(0).flatten()
            batch_var = (var * (m / (m - 1))).mean(0).flatten()
            self.running_mean.mul_(momentum).add_((1 - momentum) * batch_mean)
            self.running_var.mul_(momentum).add_((1 - momentum) * batch_var)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
