"""Mistake: only rank 0 updates the running statistics (it is the one that saves
checkpoints), so the ranks' running statistics drift apart."""

import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_running_stats_global_and_identical"
ALSO = "test_process_group, test_matches_batchnorm_on_the_global_batch"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if self.training and dist.is_available() and dist.is_initialized() and dist.get_rank():
            tracked, self.track_running_stats = self.track_running_stats, False
            try:
                return super().forward(x)
            finally:
                self.track_running_stats = tracked
        return super().forward(x)
