"""Mistake: the batch mean and variance come from x.detach(), so gradients skip the statistics."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_gradients_match"


class Detached:
    def forward(self, x):
        if not (self.training or self.running_mean is None):
            return super().forward(x)
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        n = x.size(0) * math.prod(x.shape[2:])
        if n == 1:
            raise ValueError("Expected more than 1 value per channel when training")
        mean = x.detach().mean(dims)
        var = x.detach().var(dims, unbiased=False)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var, n)
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(Detached, Reference1d):
    pass


class BatchNorm2d(Detached, Reference2d):
    pass
