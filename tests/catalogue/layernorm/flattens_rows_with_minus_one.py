"""Mistake: flattens the normalized dimensions with reshape(*lead, -1): -1 is ambiguous, so an
error, when a leading dimension is 0."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_empty_batch"


class LayerNorm(Reference):
    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(f"expected trailing shape {self.normalized_shape}, got {x.shape}")
        rows = x.reshape(*x.shape[: x.dim() - n], -1)
        compute = rows.float() if x.dtype in (torch.float16, torch.bfloat16) else rows
        mean = compute.mean(-1, keepdim=True)
        var = (compute - mean).square().mean(-1, keepdim=True)
        y = ((compute - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
