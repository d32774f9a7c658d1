"""Mistake: a Python loop over the channels; correct values, but not vectorized."""

import math

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_vectorized"


class ChannelLoop:
    def forward(self, x):
        self._check_input_dim(x)
        use_batch = self.training or self.running_mean is None
        n = x.size(0) * math.prod(x.shape[2:])
        if use_batch and n == 1:
            raise ValueError("Expected more than 1 value per channel when training")
        outputs, means, variances = [], [], []
        for c in range(x.size(1)):
            xc = x[:, c]
            if use_batch:
                mean, var = xc.mean(), xc.var(unbiased=False)
                means.append(mean)
                variances.append(var)
            else:
                mean, var = self.running_mean[c], self.running_var[c]
            yc = (xc - mean) / torch.sqrt(var + self.eps)
            if self.affine:
                yc = yc * self.weight[c] + self.bias[c]
            outputs.append(yc)
        if self.training and self.track_running_stats:
            self._update_running_stats(torch.stack(means), torch.stack(variances), n)
        return torch.stack(outputs, dim=1).to(x.dtype)


class BatchNorm1d(ChannelLoop, Reference1d):
    pass


class BatchNorm2d(ChannelLoop, Reference2d):
    pass
