"""Mistake: no check for a single value per channel, so training on it silently outputs zeros."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_single_value_per_channel_raises"


class NoCheck:
    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.numel() // x.size(1)
            mean = x.mean(dims)
            var = x.var(dims, unbiased=False)
            if self.training and self.track_running_stats and n > 1:
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(NoCheck, Reference1d):
    pass


class BatchNorm2d(NoCheck, Reference2d):
    pass
