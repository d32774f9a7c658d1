"""Mistake: the count is a new tensor made on the CPU (torch.tensor([n])), concatenated with
statistics that live on the GPU."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_follows_device"


class SyncBatchNorm(Reference):
    def forward(self, x):
        if not self.training and self.running_mean is not None:
            return super().forward(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        c = x.size(1)
        n = x.numel() // c
        stats = torch.cat([x.sum(dims), (x * x).sum(dims), torch.tensor([n], dtype=x.dtype)])
        if (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        ):
            stats = dist_fn.all_reduce(stats, group=self.process_group)
        count = stats[-1]
        mean = stats[:c] / count
        var = stats[c : 2 * c] / count - mean * mean
        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            with torch.no_grad():
                self.running_mean.lerp_(mean, m)
                self.running_var.lerp_(var * count / (count - 1), m)
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
