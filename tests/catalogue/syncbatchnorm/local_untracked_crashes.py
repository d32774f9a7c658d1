"""Mistake: without a process group, updates the running statistics whenever it trains, also
with track_running_stats=False, where they are None: training on one process raises."""

import torch

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_without_process_group_like_batchnorm"


class SyncBatchNorm(Reference):
    def _local(self, x, momentum):
        dims, shape = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            mean = x.mean(dims)
            var = (x - mean.view(shape)).square().mean(dims)
            if self.training:
                n = x.numel() // x.size(1)
                with torch.no_grad():
                    self.running_mean.mul_(1 - momentum).add_(momentum * mean)
                    self.running_var.mul_(1 - momentum).add_(momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
