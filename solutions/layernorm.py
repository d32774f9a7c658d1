"""Reference solution: LayerNorm from scratch (drop-in for torch.nn.LayerNorm)."""

from __future__ import annotations

import torch
from torch import nn


class LayerNorm(nn.Module):
    """Normalizes each sample over its trailing ``normalized_shape`` dims, then scales and shifts.

    Same constructor, attributes, parameters and ``state_dict`` as ``torch.nn.LayerNorm``.
    """

    def __init__(
        self,
        normalized_shape: int | list[int] | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(
                f"Given normalized_shape={list(self.normalized_shape)}, expected input with "
                f"shape [*, {', '.join(map(str, self.normalized_shape))}], "
                f"but got input of size {list(x.shape)}"
            )
        dims = tuple(range(-n, 0))
        # fp16/bf16: compute the statistics in float32 (as torch's kernels do), then cast back.
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        mean = xf.mean(dims, keepdim=True)
        xc = xf - mean
        # Variance of the centred values (two-pass): E[x²] - E[x]² cancels catastrophically when
        # |mean| >> std. Biased (divide by H, not H - 1), like the paper and torch.
        var = xc.square().mean(dims, keepdim=True)
        # eps inside the sqrt keeps the denominator >= sqrt(eps) for a constant row (var = 0).
        y = xc * torch.rsqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )
