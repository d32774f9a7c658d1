"""Mistake: flattens the normalized dims with x.view(*lead, D), which needs a contiguous layout.

A transposed input, which torch normalizes like any other, raises RuntimeError ("view size is
not compatible with input tensor's size and stride"); x.reshape copies when it must.
"""

import math

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_noncontiguous_input"


class LayerNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing dims {self.normalized_shape}, got {x.shape}")
        lead, d = x.shape[: x.dim() - n], math.prod(self.normalized_shape)
        rows = x.view(*lead, d)  # the mistake: reshape would copy a non-contiguous x
        rows = rows.float() if x.dtype in (torch.float16, torch.bfloat16) else rows
        mean = rows.mean(-1, keepdim=True)
        var = (rows - mean).square().mean(-1, keepdim=True)
        y = ((rows - mean) * torch.rsqrt(var + self.eps)).view(x.shape)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
