"""Mistake: forward saves the output and recovers x̂ = (y − bias) / weight in backward, to save
memory: 0/0 wherever a channel's weight is 0, and the NaN spreads through the channel."""

import torch

from solutions.batchnorm_backward import HALF, _layout
from solutions.batchnorm_backward import BatchNormFunction as Reference

EXPECT = "test_zero_weight_elements"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        xf = x.float() if x.dtype in HALF else x
        xc = xf - xf.mean(dims, keepdim=True)
        rstd = torch.rsqrt(xc.square().mean(dims, keepdim=True) + eps)
        y = xc * rstd * weight.view(shape) + bias.view(shape)
        ctx.save_for_backward(y, rstd, weight, bias)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        y, rstd, weight, bias = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        x_hat = (y - bias.view(shape)) / weight.view(shape)  # the mistake: 0/0 where weight is 0
        dy = grad_out.to(x_hat.dtype)
        g = dy * weight.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        grads = grad_x, (dy * x_hat).sum(dims), dy.sum(dims)
        return *(t.to(grad_out.dtype) for t in grads), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
