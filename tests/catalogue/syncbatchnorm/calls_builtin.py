"""Mistake: falls back to F.batch_norm without a process group and in eval, as torch's own
SyncBatchNorm does."""

import torch.nn.functional as F

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_from_scratch"


class SyncBatchNorm(Reference):
    def _local(self, x, momentum):
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or self.running_mean is None,
            momentum,
            self.eps,
        )
