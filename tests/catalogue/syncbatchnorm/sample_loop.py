"""Mistake: the local path sums each channel's values sample by sample, in a Python loop over
the batch; right values."""

import torch

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_vectorized"


class SyncBatchNorm(Reference):
    def _local(self, x, momentum):
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.numel() // x.size(1)
            total = x.new_zeros(x.size(1))
            for sample in x:
                total = total + sample.reshape(x.size(1), -1).sum(1)
            mean = total / n
            squares = x.new_zeros(x.size(1))
            for sample in x:
                squares = squares + (sample.reshape(x.size(1), -1) - mean[:, None]).square().sum(1)
            var = squares / n
            if self.training and self.track_running_stats:
                with torch.no_grad():
                    self.running_mean.mul_(1 - momentum).add_(momentum * mean)
                    self.running_var.mul_(1 - momentum).add_(momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
