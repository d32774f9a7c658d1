"""Mistake: the running statistics are updated in eval mode too (from the input's statistics)."""

import math

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_eval_leaves_running_stats_unchanged"


class Mistake:
    def forward(self, x):
        y = super().forward(x)
        if not self.training and self.track_running_stats and x.dim() > self._get_no_batch_dim():
            dims = tuple(range(2, x.dim()))
            mean = x.mean(dims, keepdim=True)
            var = (x - mean).square().mean(dims, keepdim=True)
            self._update_running_stats(mean, var, math.prod(x.shape[2:]))
        return y


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
