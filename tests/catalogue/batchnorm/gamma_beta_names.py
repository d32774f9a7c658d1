"""Mistake: the affine parameters are called gamma and beta, not weight and bias like torch's."""

import torch
from torch import nn

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_eps_inside_sqrt, test_affine_false"


class GammaBeta:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        del self.weight, self.bias
        self.gamma = nn.Parameter(torch.ones(num_features)) if self.affine else None
        self.beta = nn.Parameter(torch.zeros(num_features)) if self.affine else None

    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            mean = x.mean(dims)
            var = x.var(dims, unbiased=False)
            if self.training and self.track_running_stats:
                n = x.numel() // x.size(1)
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.gamma.view(shape) + self.beta.view(shape)
        return y


class BatchNorm1d(GammaBeta, Reference1d):
    pass


class BatchNorm2d(GammaBeta, Reference2d):
    pass
