"""Correct, written differently: normalized_shape kept as a torch.Size (a tuple, as Restormer's
and apex's LayerNorms keep it), and the mean and variance reduced one normalized dim at a time,
a loop over the k dims rather than over rows or elements."""

import torch
from torch import nn

EXPECT = "pass"


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = torch.Size(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape)) if bias else None
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    @staticmethod
    def _mean(t, dims):
        for d in dims:
            t = t.mean(d, keepdim=True)
        return t

    def forward(self, x):
        if x.shape[x.dim() - len(self.normalized_shape) :] != self.normalized_shape:
            raise ValueError(f"expected trailing dims {self.normalized_shape}, got {x.shape}")
        dims = range(x.dim() - len(self.normalized_shape), x.dim())
        xc = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mean = self._mean(xc, dims)
        d = xc - mean
        var = self._mean(d * d, dims)
        y = d / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
