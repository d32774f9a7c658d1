"""Mistake: forward and backward always compute in float32 (.float()), whatever the input.

Written for mixed precision (statistics and gradients in float32, results in the input's
dtype), it also rounds a float64 input to float32 in both passes, where torch computes in
float64. A dtype policy, not a wrong derivative: the interview core passes, with gradcheck
skipped (finite differences in float64 cannot judge a float32 forward).
"""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_computes_in_float64"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        xf = x.float()
        mean = xf.mean(dims, keepdim=True)
        xc = xf - mean
        rstd = torch.rsqrt(xc.square().mean(dims, keepdim=True) + eps)
        x_hat = xc * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight.float().view(shape) + bias.float().view(shape)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        dy = grad_out.float()
        g = dy * weight.float().view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        grad_weight, grad_bias = (dy * x_hat).sum(dims), dy.sum(dims)
        return (
            grad_x.to(grad_out.dtype),
            grad_weight.to(weight.dtype),
            grad_bias.to(weight.dtype),
            None,
        )


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
