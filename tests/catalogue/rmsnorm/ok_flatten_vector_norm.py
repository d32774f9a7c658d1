"""Correct, written differently: flatten the normalized dims and use torch.linalg.vector_norm."""

import math

import torch
from torch import nn

EXPECT = "pass"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = nn.Parameter(torch.ones(shape)) if elementwise_affine else None

    def forward(self, x):
        n = len(self.normalized_shape)
        if x.dim() < n or x.shape[-n:] != torch.Size(self.normalized_shape):
            raise RuntimeError(
                f"expected trailing shape {self.normalized_shape}, got {tuple(x.shape)}"
            )
        size = math.prod(self.normalized_shape)
        flat = x.reshape(*x.shape[:-n], size)
        flat = flat if x.dtype == torch.float64 else flat.float()
        eps = torch.finfo(flat.dtype).eps if self.eps is None else self.eps
        ms = torch.linalg.vector_norm(flat, dim=-1, keepdim=True).square() / size
        y = (flat * (ms + eps).rsqrt()).reshape(x.shape)
        if self.weight is not None:
            y = y * self.weight
        return y.type_as(x)
