"""Mistake: running_var's Bessel correction uses this rank's count n / (n - 1), not the
global N / (N - 1) (copied from BatchNorm)."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_running_stats_global_and_identical"
ALSO = "test_matches_batchnorm_on_the_global_batch"


class SyncBatchNorm(Reference):
    def forward(self, x):
        synced = (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        )
        if not synced:
            return super().forward(x)
        dims, shape, c = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2), x.size(1)
        n = x.numel() // c
        local = torch.cat([x.sum(dims), (x * x).sum(dims), x.new_tensor([float(n)])])
        stats = dist_fn.all_reduce(local, group=self.process_group)
        count = stats[-1]
        mean = stats[:c] / count
        var = stats[c : 2 * c] / count - mean * mean
        if self.track_running_stats:
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            with torch.no_grad():
                self.running_mean.lerp_(mean, m)
                self.running_var.lerp_(var * n / (n - 1), m)
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
