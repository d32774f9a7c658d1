"""Mistake: all-gathers every rank's activations (padded to the largest batch) and runs
BatchNorm on the lot: right values, but the whole input crosses the wire."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_communicates_statistics_only"
RULE = "test_communicates_statistics_only"


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
        world = dist.get_world_size(self.process_group)
        sizes = [torch.zeros(1, dtype=torch.long, device=x.device) for _ in range(world)]
        dist.all_gather(sizes, torch.tensor([x.size(0)], device=x.device), group=self.process_group)
        longest = max(int(s) for s in sizes)
        padded = torch.cat([x, x.new_zeros(longest - x.size(0), *x.shape[1:])])
        parts = dist_fn.all_gather(padded, group=self.process_group)
        everything = torch.cat([p[: int(s)] for p, s in zip(parts, sizes)])
        mean = everything.mean(dims)
        var = everything.var(dims, unbiased=False)
        count = everything.numel() // c
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
