"""Mistake: never adds eps to the variance: a constant channel (variance 0) gives 0 / 0, NaN,
in training and in eval, on one process and on the ranks."""

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_eps_inside_sqrt"


class SyncBatchNorm(Reference):
    def forward(self, x):
        dims, shape = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2)
        synced = (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size(self.process_group) > 1
        )

        def total(t):  # summed over the ranks, differentiably, when synchronised
            return dist_fn.all_reduce(t, group=self.process_group) if synced else t

        if self.training or self.running_mean is None:
            count = total(x.new_tensor([x.numel() / x.size(1)]))
            mean = total(x.sum(dims)) / count
            var = total((x - mean.view(shape)).square().sum(dims)) / count
            if self.training and self.track_running_stats:
                self.num_batches_tracked += 1
                m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
                with torch.no_grad():
                    self.running_mean.lerp_(mean, m)
                    self.running_var.lerp_(var * count / (count - 1), m)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape))
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
