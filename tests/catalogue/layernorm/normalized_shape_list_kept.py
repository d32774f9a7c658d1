"""Mistake: keeps normalized_shape as the list it was given (only an int is wrapped), so
ln.normalized_shape is a list where torch's is a tuple."""

import torch
from torch import nn

EXPECT = "test_parameters"


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = (
            normalized_shape
            if isinstance(normalized_shape, (tuple, list))
            else tuple(normalized_shape)
        )
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
            if bias:
                self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != tuple(self.normalized_shape):
            raise RuntimeError(
                f"normalized_shape={list(self.normalized_shape)} but input size {list(x.shape)}"
            )
        dims = tuple(range(-n, 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mean = xf.mean(dims, keepdim=True)
        xc = xf - mean
        var = xc.square().mean(dims, keepdim=True)
        y = xc * torch.rsqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)
