"""Correct, written differently: list reductions, a plain division, and the weight applied
after casting back, as Hugging Face's LlamaRMSNorm does (one more rounding in half precision)."""

import torch
from torch import nn

EXPECT = "pass"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(*self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = len(self.normalized_shape)
        if x.dim() < k or tuple(x.shape[-k:]) != self.normalized_shape:
            raise ValueError(f"RMSNorm{self.normalized_shape} got input of shape {tuple(x.shape)}")
        dims = [-(i + 1) for i in range(k)]
        compute = torch.float64 if x.dtype == torch.float64 else torch.float32
        xc = x.to(compute)
        eps = self.eps if self.eps is not None else torch.finfo(compute).eps
        out = (xc / torch.sqrt(torch.mean(xc * xc, dim=dims, keepdim=True) + eps)).to(x.dtype)
        if self.elementwise_affine:
            out = out * self.weight
        return out
