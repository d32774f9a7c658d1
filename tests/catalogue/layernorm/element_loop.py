"""Mistake: sums each row's features one at a time, a Python loop over the normalized elements."""

import math

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_vectorized"


class LayerNorm(Reference):
    def forward(self, x):
        k = len(self.normalized_shape)
        if x.dim() < k or tuple(x.shape[x.dim() - k :]) != self.normalized_shape:
            raise RuntimeError(f"expected input with shape [*, {self.normalized_shape}]")
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        n = math.prod(self.normalized_shape)
        flat = xf.reshape(*x.shape[: x.dim() - k], n)
        total = torch.zeros_like(flat[..., 0])
        for j in range(n):  # one feature at a time: n iterations
            total = total + flat[..., j]
        mean = (total / n).unsqueeze(-1)
        var = (flat - mean).square().mean(-1, keepdim=True)
        y = ((flat - mean) * torch.rsqrt(var + self.eps)).reshape(x.shape)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
