"""Mistake: eval mode forgets eps, dividing by sqrt(running_var); training mode has it. With
the default eps=1e-5 and running variances near 1 the output moves by about 5e-6, inside any
tolerance: only a large eps makes it visible."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_eps_inside_sqrt"
ALSO = "test_eval_uses_running_stats, test_several_steps_then_eval"


class NoEpsInEval:
    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.size(0) * math.prod(x.shape[2:])
            if n == 1:
                raise ValueError("Expected more than 1 value per channel when training")
            mean = x.mean(dims)
            var = (x - mean.view(shape)).square().mean(dims)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
            y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        else:
            y = (x - self.running_mean.view(shape)) * torch.rsqrt(self.running_var.view(shape))
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(NoEpsInEval, Reference1d):
    pass


class BatchNorm2d(NoEpsInEval, Reference2d):
    pass
