"""Reference solution: RMSNorm from scratch (drop-in for torch.nn.RMSNorm)."""

from __future__ import annotations

import torch
from torch import nn


class RMSNorm(nn.Module):
    """Divides each sample by the root mean square of its trailing dims, then scales.

    No mean subtraction and no bias. Same constructor, attributes, parameters and
    ``state_dict`` as ``torch.nn.RMSNorm``.
    """

    def __init__(
        self,
        normalized_shape: int | list[int] | tuple[int, ...],
        eps: float | None = None,
        elementwise_affine: bool = True,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = len(self.normalized_shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(
                f"Given normalized_shape={list(self.normalized_shape)}, expected input with "
                f"shape [*, {', '.join(map(str, self.normalized_shape))}], "
                f"but got input of size {list(x.shape)}"
            )
        dims = tuple(range(-n, 0))
        # fp16/bf16: x² overflows fp16 above |x| ≈ 256 (65504 is its max), and a long sum of
        # squares loses precision, so compute in float32 and cast the result back.
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        # eps=None: machine epsilon of the *computation* dtype, i.e. finfo(float32).eps for
        # fp16/bf16/fp32 inputs and finfo(float64).eps for fp64 (checked against torch 2.13:
        # finfo(float16).eps = 9.8e-4 would visibly change small inputs; torch does not use it).
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight  # still in float32 for half inputs, as torch does
        return y.to(x.dtype)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
