"""Mistake: uses momentum as the factor without handling momentum=None."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_momentum_none"


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
        local = torch.cat([x.sum(dims), (x * x).sum(dims), x.new_tensor([x.numel() / c])])
        stats = dist_fn.all_reduce(local, group=self.process_group)
        count = stats[-1]
        mean = stats[:c] / count
        var = stats[c : 2 * c] / count - mean * mean
        if self.track_running_stats:
            self.num_batches_tracked += 1
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(
                    self.momentum * var * count / (count - 1)
                )
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
