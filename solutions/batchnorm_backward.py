"""Reference solution: training-mode BatchNorm with a hand-written backward pass."""

from __future__ import annotations

import torch

HALF = (torch.float16, torch.bfloat16)


def _layout(x: torch.Tensor) -> tuple[list[int], list[int]]:
    """The dims a channel's statistics run over (all but 1), and the (C,) -> x broadcast shape."""
    return [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2)


class BatchNormFunction(torch.autograd.Function):
    """y = x̂ · weight + bias, x̂ = (x − mean) · rstd per channel over the batch; backward by hand."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):  # type: ignore[no-untyped-def, override]
        dims, shape = _layout(x)
        xf = x.float() if x.dtype in HALF else x  # statistics in float32 for half inputs
        mean = xf.mean(dims, keepdim=True)
        xc = xf - mean
        rstd = torch.rsqrt(xc.square().mean(dims, keepdim=True) + eps)  # biased: the batch's own
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)  # x̂, one rstd per channel, and the weight
        return (x_hat * weight.view(shape) + bias.view(shape)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[no-untyped-def, override]
        x_hat, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        dy = grad_out.to(x_hat.dtype)
        grad_weight = (dy * x_hat).sum(dims)
        grad_bias = dy.sum(dims)
        g = dy * weight.view(shape)  # dL/dx̂
        # Every sample moves its channel's mean and variance, hence the two batch means: the
        # gradient of one sample depends on the whole batch.
        g_mean = g.mean(dims, keepdim=True)
        gx_mean = (g * x_hat).mean(dims, keepdim=True)
        grad_x = rstd * (g - g_mean - x_hat * gx_mean)
        grads = grad_x.to(grad_out.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype)
        return *grads, None  # no gradient for eps


def batch_norm_train(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """Training-mode batch normalization of x (N, C, *) through BatchNormFunction."""
    return BatchNormFunction.apply(x, weight, bias, eps)
