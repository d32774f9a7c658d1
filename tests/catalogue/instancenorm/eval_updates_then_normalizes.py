"""Mistake: eval mode updates the running statistics from the input first, then normalizes
with them. It does normalize with its running statistics: the eval check hands the mistake
to the check that eval leaves them unchanged."""

import math

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_eval_leaves_running_stats_unchanged"
ALSO = (
    "test_eval_uses_running_stats, "
    "test_unbatched_input, "
    "test_forward_matches_torch, "
    "test_gradients_match, "
    "test_several_steps_then_eval"
)


class Mistake:
    def forward(self, x):
        if not self.training and self.track_running_stats and x.dim() > self._get_no_batch_dim():
            dims = tuple(range(2, x.dim()))
            mean = x.mean(dims, keepdim=True)
            var = (x - mean).square().mean(dims, keepdim=True)
            self._update_running_stats(mean, var, math.prod(x.shape[2:]))
        return super().forward(x)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
