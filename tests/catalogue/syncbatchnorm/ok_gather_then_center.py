"""Correct, written differently: differentiable all_gather of each rank's [n, Σx] for the mean,
then a differentiable all_reduce of Σ(x - mean)² for the variance (two passes, no Function)."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "pass"


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
        dims = (0, *range(2, x.ndim))
        c = x.shape[1]
        local = torch.cat([x.new_full((1,), x.numel() / c), x.sum(dims)])
        table = torch.stack(dist_fn.all_gather(local, group=self.process_group))
        count = table[:, 0].sum()
        mean = table[:, 1:].sum(0) / count
        centred = x - mean.reshape(1, c, *[1] * (x.ndim - 2))
        var = dist_fn.all_reduce(centred.pow(2).sum(dims), group=self.process_group) / count
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.item()
            else:
                factor = self.momentum
            with torch.no_grad():
                self.running_mean.mul_(1 - factor).add_(mean, alpha=factor)
                self.running_var.mul_(1 - factor).add_(var * count / (count - 1), alpha=factor)
        y = centred / (var + self.eps).sqrt().reshape(1, c, *[1] * (x.ndim - 2))
        if self.weight is not None:
            y = y * self.weight.reshape(1, c, *[1] * (x.ndim - 2))
            y = y + self.bias.reshape(1, c, *[1] * (x.ndim - 2))
        return y
