"""Mistake: always computes the statistics in float32 (x.float()), also for float64 inputs.

Meant as the half-precision upcast, it rounds a float64 input to float32 on the way: outputs
and running statistics then have float32 accuracy, not float64's. A dtype policy, not a formula
mistake: the interview core passes.
"""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_computes_in_float64"


class Float32Stats:
    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        xf = x.float()
        if self.training or self.running_mean is None:
            n = x.numel() // x.size(1)
            mean = xf.mean(dims)
            var = (xf - mean.view(shape)).square().mean(dims)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean.float(), self.running_var.float()
        y = (xf - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(Float32Stats, Reference1d):
    pass


class BatchNorm2d(Float32Stats, Reference2d):
    pass
