"""Mistake: forward sums each row one element at a time in a Python loop: right values, but its
work grows with the row's width."""

import torch

from solutions.layernorm_backward import HALF
from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_vectorized"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float() if x.dtype in HALF else x
        d = xf.shape[-1]
        total = torch.zeros_like(xf[..., :1])
        for j in range(d):
            total = total + xf[..., j : j + 1]
        xc = xf - total / d
        rstd = torch.rsqrt(xc.square().mean(-1, keepdim=True) + eps)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight + bias).to(x.dtype)


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
