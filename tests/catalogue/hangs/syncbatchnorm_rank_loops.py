# Rank 1 loops forever in forward while training (test_graders: the run stops, no process stays).
import torch.distributed as dist

from solutions.syncbatchnorm import SyncBatchNorm as Reference


class SyncBatchNorm(Reference):
    def forward(self, x):
        ranks = dist.is_available() and dist.is_initialized()
        while self.training and ranks and dist.get_rank() == 1:
            pass
        return super().forward(x)
