"""Mistake: the mean is the group's, but the variance is each channel's own, over its positions.

The variance's reduction leaves out the group's channel dim: each channel is scaled by its own
spread around the group mean. A one-sample check of the variance used to fail first, with a
hint about dividing by m − 1; the mistake is which values form the group.
"""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_one_and_c_groups"
ALSO = "test_biased_variance, test_forward_matches_torch, test_gradients_match"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        groups = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        dims = tuple(range(2, xf.dim()))
        mean = xf.mean(dims, keepdim=True)
        # The group's channel dim left out: each channel's spread over its own positions.
        deviations = (xf - mean).square()
        var = deviations.mean(dims[1:], keepdim=True) if dims[1:] else deviations
        y = ((xf - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
