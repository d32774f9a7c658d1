"""Correct, written differently: flatten the normalized dims, torch.var_mean, rsqrt."""

import math

import torch
from torch import nn

EXPECT = "pass"


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape, self.eps = shape, eps
        self.weight = nn.Parameter(torch.ones(shape)) if elementwise_affine else None
        self.bias = nn.Parameter(torch.zeros(shape)) if elementwise_affine and bias else None

    def forward(self, x):
        n = len(self.normalized_shape)
        if x.shape[-n:] != torch.Size(self.normalized_shape) or x.dim() < n:
            raise ValueError(
                f"expected trailing shape {self.normalized_shape}, got {tuple(x.shape)}"
            )
        flat = x.reshape(*x.shape[:-n], math.prod(self.normalized_shape))
        # Half precision is upcast for the statistics; float32 and float64 stay as they are.
        wide = flat.float() if flat.dtype in (torch.float16, torch.bfloat16) else flat
        var, mean = torch.var_mean(wide, dim=-1, keepdim=True, correction=0)
        y = ((flat - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
