"""Mistake: the running statistics are updated on every forward, in eval mode too."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_eval_leaves_running_stats_unchanged"
# eval counts the step too, and the statistics it normalizes with are no longer the ones kept
ALSO = "test_num_batches_tracked"


class UpdatesInEval:
    def forward(self, x):
        if self.training or not self.track_running_stats:
            return super().forward(x)
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        mean, var = self.running_mean.clone(), self.running_var.clone()
        n = x.size(0) * math.prod(x.shape[2:])
        if n > 1:  # "keep the statistics fresh"
            self._update_running_stats(x.mean(dims), x.var(dims, unbiased=False), n)
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(UpdatesInEval, Reference1d):
    pass


class BatchNorm2d(UpdatesInEval, Reference2d):
    pass
