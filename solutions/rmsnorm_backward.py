"""Reference solution: RMSNorm over the last dimension with a hand-written backward pass."""

from __future__ import annotations

import torch
from torch import nn

HALF = (torch.float16, torch.bfloat16)


class RMSNormFunction(torch.autograd.Function):
    """y = x̂ · weight, x̂ = x · rstd, rstd = 1/√(mean(x²) + eps) over the last dim; backward
    by hand."""

    @staticmethod
    def forward(ctx, x, weight, eps):  # type: ignore[no-untyped-def, override]
        xf = x.float() if x.dtype in HALF else x  # statistics in float32 for half inputs
        if eps is None:  # torch's default: the machine epsilon of the dtype computed in
            eps = torch.finfo(xf.dtype).eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        x_hat = xf * rstd
        # x̂ and rstd are all backward needs (with weight): no x, no autograd graph.
        ctx.save_for_backward(x_hat, rstd, weight)
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[no-untyped-def, override]
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        grad_weight = None
        if weight is not None:  # a sum over every row: (-1, D) rows, one for x of shape (D,)
            grad_weight = (dy * x_hat).reshape(-1, dy.shape[-1]).sum(0).to(weight.dtype)
        g = dy if weight is None else dy * weight  # dL/dx̂
        # dL/dx = rstd · (g − x̂ · mean(g · x̂)): the rms depends on every element of the row,
        # which removes from g its component along x̂.
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x.to(grad_out.dtype), grad_weight, None  # no gradient for eps


def rms_norm(
    x: torch.Tensor, weight: torch.Tensor | None = None, eps: float | None = None
) -> torch.Tensor:
    """RMSNorm of x over its last dimension, through RMSNormFunction."""
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(nn.Module):
    """torch.nn.RMSNorm over the last dimension, its gradients from RMSNormFunction."""

    def __init__(
        self,
        normalized_shape: int | tuple[int],
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
        return rms_norm(x, self.weight, self.eps)
