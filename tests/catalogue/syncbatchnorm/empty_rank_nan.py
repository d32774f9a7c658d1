"""Mistake: gathers each rank's (count, mean, variance); an empty rank's mean is 0/0 = NaN,
and count 0 times NaN is still NaN: every rank's statistics become NaN."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_rank_with_empty_batch"


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
        local = torch.cat(
            [x.new_tensor([x.numel() / c]), x.mean(dims), x.var(dims, unbiased=False)]
        )
        table = torch.stack(dist_fn.all_gather(local, group=self.process_group))
        counts, means, variances = table[:, :1], table[:, 1 : c + 1], table[:, c + 1 :]
        count = counts.sum()
        mean = (counts * means).sum(0) / count
        var = (counts * (variances + (means - mean) ** 2)).sum(0) / count
        if self.track_running_stats:
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            with torch.no_grad():
                self.running_mean.lerp_(mean, m)
                self.running_var.lerp_(var * count / (count - 1), m)
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
