"""Mistake: synchronises whenever a process group exists, eval mode included: eval then
normalizes with the global batch, not the running statistics, and communicates."""

import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference
from solutions.syncbatchnorm import _SyncBatchNormFunction

EXPECT = "test_eval_mode"
ALSO = "test_matches_batchnorm_on_the_global_batch"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if not (
            dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        ):
            return super().forward(x)
        m = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        update = self.training and self.track_running_stats
        return _SyncBatchNormFunction.apply(
            x,
            self.weight,
            self.bias,
            self.running_mean if update else None,
            self.running_var if update else None,
            self.eps,
            m,
            self.process_group,
        )
