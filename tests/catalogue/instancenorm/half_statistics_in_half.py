"""Mistake: no upcast for half inputs: each channel's mean and variance are computed and rounded
in float16/bfloat16. On ordinary data that costs an ulp or two, within the loose comparison with
torch; on x = 384 + randn (float16) a channel mean rounded to float16 is off by up to 1/8 of the
spread, and every x̂ with it."""

import math

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_half_precision"
SAYS = "only on half-precision inputs"


class Mistake:
    def _normalize(self, x):
        dims = tuple(range(2, x.dim()))
        shape = (1, -1) + (1,) * (x.dim() - 2)
        if self.training or not self.track_running_stats:
            m = math.prod(x.shape[2:])
            if m == 1:
                raise ValueError(
                    f"Expected more than 1 spatial element when training, got input size {x.size()}"
                )
            mean = x.mean(dims, keepdim=True)  # in x's dtype: float16 or bfloat16 too
            var = (x - mean).square().mean(dims, keepdim=True)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, m)
        else:
            mean, var = self.running_mean.view(shape), self.running_var.view(shape)
        y = (x - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
