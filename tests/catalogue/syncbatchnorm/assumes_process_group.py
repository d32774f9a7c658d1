"""Mistake: asks torch.distributed for the world size without checking that a process group
exists, so one process (no init_process_group) crashes."""

import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference
from solutions.syncbatchnorm import _SyncBatchNormFunction

EXPECT = "test_without_process_group_like_batchnorm"
ALSO = "test_without_torch_distributed, test_follows_device, test_eps_inside_sqrt"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if not self.training or dist.get_world_size(self.process_group) == 1:
            return super().forward(x)
        self.num_batches_tracked.add_(1)
        m = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        return _SyncBatchNormFunction.apply(
            x,
            self.weight,
            self.bias,
            self.running_mean,
            self.running_var,
            self.eps,
            m,
            self.process_group,
        )
