"""Mistake: asks dist.is_initialized() without dist.is_available() first: on a torch built
without torch.distributed there is no is_initialized, and every forward raises."""

import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference
from solutions.syncbatchnorm import _SyncBatchNormFunction

EXPECT = "test_without_torch_distributed"


class SyncBatchNorm(Reference):
    def forward(self, x):
        momentum = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            m = self.momentum
            momentum = 1.0 / float(self.num_batches_tracked) if m is None else m
        if self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1:
            tracked = self.track_running_stats
            return _SyncBatchNormFunction.apply(
                x, self.weight, self.bias, self.running_mean if tracked else None,
                self.running_var if tracked else None, self.eps, momentum, self.process_group,
            )  # fmt: skip
        return self._local(x, momentum)
