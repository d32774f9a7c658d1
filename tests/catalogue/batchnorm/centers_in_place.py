"""Mistake: centres the input in place (x.sub_(mean)), overwriting the caller's tensor."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_input_unmodified"
ALSO = "test_running_stats_no_autograd_history, test_gradients_match"


class InPlace:
    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.size(0) * math.prod(x.shape[2:])
            if n == 1:
                raise ValueError("Expected more than 1 value per channel when training")
            mean = x.mean(dims)
            var = x.var(dims, unbiased=False)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean, self.running_var
        with torch.no_grad():
            x.sub_(mean.view(shape))
        y = x * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(InPlace, Reference1d):
    pass


class BatchNorm2d(InPlace, Reference2d):
    pass
