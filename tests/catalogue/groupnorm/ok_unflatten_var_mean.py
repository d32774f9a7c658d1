"""Correct, written differently: unflatten the channel dim, torch.var_mean, a plain division."""

import torch
from torch import nn

EXPECT = "pass"


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        self.weight = nn.Parameter(torch.ones(num_channels)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_channels)) if affine else None

    def forward(self, x):
        g = x.unflatten(1, (self.num_groups, -1))
        wide = g.float() if x.dtype in (torch.float16, torch.bfloat16) else g
        dims = list(range(2, wide.dim()))
        var, mean = torch.var_mean(wide, dim=dims, keepdim=True, correction=0)
        y = ((wide - mean) / (var + self.eps).sqrt()).flatten(1, 2)
        if self.weight is not None:
            extra = [1] * (x.dim() - 2)
            y = y * self.weight.view(-1, *extra) + self.bias.view(-1, *extra)
        return y.to(x.dtype)
