"""Mistake: the weight starts at zeros (Gemma's init, meant for a (1 + weight) gain) but is applied
as a plain gain, so a fresh layer outputs all zeros."""

import torch
from torch import nn

EXPECT = "test_parameters"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.zeros(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(
                f"normalized_shape={list(self.normalized_shape)} but input size {list(x.shape)}"
            )
        dims = tuple(range(-n, 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        ms = xf.square().mean(dims, keepdim=True)
        y = xf * torch.rsqrt(ms + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
