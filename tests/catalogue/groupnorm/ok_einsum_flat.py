"""Correct, written differently: flatten each group to a row, sums of squares, rsqrt."""

import math

import torch
from torch import nn

EXPECT = "pass"


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(num_channels))
            self.bias = nn.Parameter(torch.zeros(num_channels))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        n = x.shape[0]
        m = (x.shape[1] // self.num_groups) * math.prod(x.shape[2:])
        rows = x.reshape(n, self.num_groups, m)
        if x.dtype in (torch.float16, torch.bfloat16):
            rows = rows.float()
        centred = rows - rows.sum(-1, keepdim=True) / m
        rstd = torch.rsqrt(centred.pow(2).sum(-1, keepdim=True) / m + self.eps)
        y = (centred * rstd).reshape(x.shape)
        if self.affine:
            view = [1, self.num_channels] + [1] * (x.dim() - 2)
            y = torch.addcmul(self.bias.reshape(view), y, self.weight.reshape(view))
        return y.to(x.dtype)
