"""Mistake: stores process_group but synchronises over the default group (every rank)."""

import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference
from solutions.syncbatchnorm import _SyncBatchNormFunction

EXPECT = "test_process_group"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if not (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size() > 1
        ):
            return super().forward(x)
        m = 0.0
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        return _SyncBatchNormFunction.apply(
            x, self.weight, self.bias, self.running_mean, self.running_var, self.eps, m, None
        )
