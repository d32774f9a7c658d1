"""Mistake: num_groups taken as the number of channels per group, G and C/G swapped.

x.reshape(N, C // G, G, ...) with the statistics over dims 2 and up: groups of G consecutive
channels, C / G of them. GroupNorm(1, C) then normalizes each channel alone, and GroupNorm(C, C)
the whole sample.
"""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_one_and_c_groups"
ALSO = (
    "test_biased_variance, "
    "test_groups_are_contiguous_channels, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        groups = x.reshape(
            n, c // self.num_groups, self.num_groups, *x.shape[2:]
        )  # G and C / G swapped
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        dims = tuple(range(2, xf.dim()))
        mean = xf.mean(dims, keepdim=True)
        var = (xf - mean).square().mean(dims, keepdim=True)
        y = ((xf - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)
