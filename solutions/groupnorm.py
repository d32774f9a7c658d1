"""Reference solution: GroupNorm from scratch (drop-in for torch.nn.GroupNorm)."""

from __future__ import annotations

import torch
from torch import nn


class GroupNorm(nn.Module):
    """Normalizes each sample's channels in groups of C / G, over the group and all positions.

    Same constructor, attributes, parameters and ``state_dict`` as ``torch.nn.GroupNorm``.
    """

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:  # per channel, not per group: each channel keeps its own scale and shift
            self.weight = nn.Parameter(torch.ones(num_channels))
            self.bias = nn.Parameter(torch.zeros(num_channels))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c = x.shape[:2]
        # (N, G, C/G, *): group g holds the consecutive channels g*C/G ... (g+1)*C/G - 1.
        groups = x.reshape(n, self.num_groups, c // self.num_groups, *x.shape[2:])
        # Half precision: statistics in float32, as torch computes them.
        xf = groups.float() if x.dtype in (torch.float16, torch.bfloat16) else groups
        dims = tuple(range(2, xf.dim()))  # the group's channels and every position, per sample
        mean = xf.mean(dims, keepdim=True)
        var = (xf - mean).square().mean(dims, keepdim=True)  # biased, like LayerNorm
        y = ((xf - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)  # (C,) broadcast along dim 1
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
