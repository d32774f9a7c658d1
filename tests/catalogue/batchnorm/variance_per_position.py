"""Mistake: each position's mean and variance over the batch (dim 0 alone), then averaged over
the positions. The mean comes out right; the variance misses the spread between positions."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_batchnorm1d_reduces_over_n_l"
ALSO = (
    "test_batchnorm2d_reduces_over_n_h_w, "
    "test_running_var_unbiased, "
    "test_forward_matches_torch, "
    "test_gradients_match, "
    "test_several_steps_then_eval"
)


class PerPosition:
    def forward(self, x):
        self._check_input_dim(x)
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.size(0) * math.prod(x.shape[2:])
            if n == 1:
                raise ValueError(f"Expected more than 1 value per channel, got {list(x.shape)}")
            var, mean = torch.var_mean(x, dim=0, correction=0)
            if x.dim() > 2:  # the mistake: averaged over positions, not taken over them
                positions = tuple(range(1, x.dim() - 1))
                var, mean = var.mean(positions), mean.mean(positions)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(PerPosition, Reference1d):
    pass


class BatchNorm2d(PerPosition, Reference2d):
    pass
