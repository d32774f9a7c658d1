"""Mistake: the variance as E[x²] − E[x]² (one pass), in float32 for float32 and half inputs.
It subtracts two nearly equal numbers: on x = 1000 + randn in float32 the two means are about
a million and differ by one (the check named for it), and on x = 384 + randn (float16, computed in
float32) the two means are about 147 000 and differ by about 1, so the variance keeps two
significant digits: the half-precision check fails it too, and says that float32 loses it as
well (shown with --all, the core failing first)."""

import math

import torch

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_numerically_stable"
ALSO = "test_forward_matches_torch, test_half_precision"


class Mistake:
    def _normalize(self, x):
        dims = tuple(range(2, x.dim()))
        shape = (1, -1) + (1,) * (x.dim() - 2)
        xc = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        if self.training or not self.track_running_stats:
            m = math.prod(x.shape[2:])
            if m == 1:
                raise ValueError(
                    f"Expected more than 1 spatial element when training, got input size {x.size()}"
                )
            mean = xc.mean(dims, keepdim=True)
            var = (xc.square().mean(dims, keepdim=True) - mean.square()).clamp_min(0)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, m)
        else:
            mean, var = self.running_mean.view(shape), self.running_var.view(shape)
        y = (xc - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
