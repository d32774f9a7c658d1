"""Mistake: a Python loop over the channels."""

import math

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_vectorized"


class Mistake:
    def _normalize(self, x):
        return torch.cat([self._normalize_one(x[:, c : c + 1], c) for c in range(x.size(1))], 1)

    def _normalize_one(self, x, c):
        dims = tuple(range(2, x.dim()))
        if self.training or not self.track_running_stats:
            if math.prod(x.shape[2:]) == 1:
                raise ValueError(
                    f"Expected more than 1 spatial element when training, got {x.size()}"
                )
            mean = x.mean(dims, keepdim=True)
            var = (x - mean).square().mean(dims, keepdim=True)
            if self.training and self.track_running_stats and self.momentum is not None:
                m, k = math.prod(x.shape[2:]), self.momentum
                with torch.no_grad():
                    self.running_mean[c] = (1 - k) * self.running_mean[c] + k * mean.mean()
                    self.running_var[c] = (1 - k) * self.running_var[c] + k * (
                        var * m / (m - 1)
                    ).mean()
        else:
            mean, var = self.running_mean[c], self.running_var[c]
        y = (x - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight[c] + self.bias[c]
        return y


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
