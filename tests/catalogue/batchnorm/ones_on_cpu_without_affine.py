"""Mistake: without affine, scales by a torch.ones(C) made in forward, on the CPU.

Standing in for the missing weight and bias, torch.ones(C) and torch.zeros(C) are created on the
CPU whatever the input's device, so affine=False fails on a GPU.
"""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_follows_device"


class CpuOnes:
    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.numel() // x.size(1)
            if n == 1:
                raise ValueError(
                    "Expected more than 1 value per channel when training, "
                    f"got input size {list(x.shape)}"
                )
            mean = x.mean(dims)
            var = (x - mean.view(shape)).square().mean(dims)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean, self.running_var
        weight = self.weight if self.affine else torch.ones(self.num_features)
        bias = self.bias if self.affine else torch.zeros(self.num_features)
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        return (y * weight.view(shape) + bias.view(shape)).to(x.dtype)


class BatchNorm1d(CpuOnes, Reference1d):
    pass


class BatchNorm2d(CpuOnes, Reference2d):
    pass
