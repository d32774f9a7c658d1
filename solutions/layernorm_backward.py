"""Reference solution: LayerNorm over the last dimension with a hand-written backward pass."""

from __future__ import annotations

import torch

HALF = (torch.float16, torch.bfloat16)


class LayerNormFunction(torch.autograd.Function):
    """y = x̂ · weight + bias, x̂ = (x − mean) · rstd over the last dim; backward by hand."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        xf = x.float() if x.dtype in HALF else x  # statistics in float32 for half inputs
        mean = xf.mean(-1, keepdim=True)
        xc = xf - mean
        rstd = torch.rsqrt(xc.square().mean(-1, keepdim=True) + eps)  # biased variance
        x_hat = xc * rstd
        # x̂ and rstd are all backward needs (with weight): no x, no mean, no autograd graph.
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight + bias).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[no-untyped-def, override]
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        # Sums over every row: reshaped to (rows, D), as x may be (D,) and .sum(()) would
        # sum over every dim. reshape, not view: grad_out may be non-contiguous.
        d = dy.shape[-1]
        grad_weight = (dy * x_hat).reshape(-1, d).sum(0)
        grad_bias = dy.reshape(-1, d).sum(0)
        g = dy * weight  # dL/dx̂
        # dL/dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)): the mean and the variance both
        # depend on every element of the row, which the two mean terms account for.
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grads = grad_x.to(grad_out.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype)
        return *grads, None  # no gradient for eps


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """LayerNorm of x over its last dimension, through LayerNormFunction."""
    return LayerNormFunction.apply(x, weight, bias, eps)
