"""Mistake: normalizes with the unbiased variance (divide by m - 1)."""

import math

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_biased_variance"
ALSO = "test_forward_matches_torch, test_gradients_match, test_several_steps_then_eval"


class Mistake:
    def _normalize(self, x):
        dims = tuple(range(2, x.dim()))
        shape = (1, -1) + (1,) * (x.dim() - 2)
        m = math.prod(x.shape[2:])
        if self.training or not self.track_running_stats:
            if m == 1:
                raise ValueError(
                    f"Expected more than 1 spatial element when training, got {x.size()}"
                )
            mean = x.mean(dims, keepdim=True)
            var = x.var(dims, keepdim=True)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var * (m - 1) / m, m)
        else:
            mean, var = self.running_mean.view(shape), self.running_var.view(shape)
        y = (x - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
