"""Correct, written differently: per-dimension tuple reductions and a plain division; half
inputs get float32 statistics, and the affine step runs in the input's dtype after the cast."""

import torch
from torch import nn

EXPECT = "pass"


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(*self.normalized_shape))
            self.bias = nn.Parameter(torch.zeros(*self.normalized_shape)) if bias else None
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = len(self.normalized_shape)
        if tuple(x.shape[-k:]) != self.normalized_shape:
            raise RuntimeError(
                f"LayerNorm{self.normalized_shape} got input of shape {tuple(x.shape)}"
            )
        dims = [-(i + 1) for i in range(k)]
        xs = x.to(torch.float32) if x.dtype in (torch.float16, torch.bfloat16) else x
        centred = xs - xs.mean(dim=dims, keepdim=True)
        std = torch.sqrt(torch.mean(centred * centred, dim=dims, keepdim=True) + self.eps)
        out = (centred / std).to(x.dtype)
        if self.elementwise_affine:
            out = out * self.weight
            if self.bias is not None:
                out = out + self.bias
        return out
