"""Mistake: forward always scales and shifts, even with affine=False, where weight and bias are
None: it raises. Checks that build the layer without affine to see the normalization alone
hand that error to test_no_affine."""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_no_affine"
ALSO = (
    "test_biased_variance, "
    "test_one_and_c_groups, "
    "test_groups_are_contiguous_channels, "
    "test_eps_inside_sqrt, "
    "test_numerically_stable, "
    "test_follows_device"
)


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        groups = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        dims = tuple(range(2, xf.dim()))
        mean = xf.mean(dims, keepdim=True)
        var = (xf - mean).square().mean(dims, keepdim=True)
        y = ((xf - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.dim() - 2)
        return (y * self.weight.view(shape) + self.bias.view(shape)).to(x.dtype)
