"""Triton's fused LayerNorm tutorial, in tensor operations: the interview answer, with its
dtype policy.

Its kernels load x, the weight and grad_out as float32 (``.to(tl.float32)``) whatever the input
dtype, keep mean and rstd in float32, and store the results in the input's dtype: right for
float16/bfloat16, but a float64 input is rounded to float32 in forward and in backward, where
torch computes in float64. Which dtype a function computes in is torch parity: the interview
core passes, with gradcheck skipped (finite differences in float64 cannot judge a float32
forward).
"""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_computes_in_float64"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xf = x.float()
        mean = xf.mean(-1, keepdim=True)
        xc = xf - mean
        rstd = torch.rsqrt(xc.square().mean(-1, keepdim=True) + eps)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight.float() + bias.float()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.float()
        d = dy.shape[-1]
        g = dy * weight.float()
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grad_weight, grad_bias = (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return (
            grad_x.to(grad_out.dtype),
            grad_weight.to(weight.dtype),
            grad_bias.to(weight.dtype),
            None,
        )


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
