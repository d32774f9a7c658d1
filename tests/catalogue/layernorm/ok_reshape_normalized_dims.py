"""Correct: flattens the normalized dims with reshape (a copy where x is not contiguous), then
normalizes each row of D values and reshapes back."""

import math

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "pass"


class LayerNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing dims {self.normalized_shape}, got {x.shape}")
        lead, d = x.shape[: x.dim() - n], math.prod(self.normalized_shape)
        rows = x.reshape(*lead, d)
        rows = rows.float() if x.dtype in (torch.float16, torch.bfloat16) else rows
        var, mean = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)
        y = ((rows - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
