"""Mistake: normalizes with the unbiased batch variance (divide by m - 1), not the biased one."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_biased_variance_in_training"
ALSO = "test_forward_matches_torch, test_gradients_match, test_several_steps_then_eval"


class Unbiased:
    def forward(self, x):
        if not (self.training or self.running_mean is None):
            return super().forward(x)
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        n = x.size(0) * math.prod(x.shape[2:])
        if n == 1:
            raise ValueError("Expected more than 1 value per channel when training")
        mean = x.mean(dims)
        var = x.var(dims, unbiased=True)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var * (n - 1) / max(n, 1), n)
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(Unbiased, Reference1d):
    pass


class BatchNorm2d(Unbiased, Reference2d):
    pass
