"""Mistake: backward hands the work to the built-in aten.native_batch_norm_backward."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_from_scratch"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        mean = x.mean(dims)
        rstd = torch.rsqrt(x.var(dims, unbiased=False) + eps)
        ctx.save_for_backward(x, mean, rstd, weight)
        ctx.eps = eps
        return (x - mean.view(shape)) * rstd.view(shape) * weight.view(shape) + bias.view(shape)

    @staticmethod
    def backward(ctx, grad_out):
        x, mean, rstd, weight = ctx.saved_tensors
        grads = torch.ops.aten.native_batch_norm_backward(
            grad_out, x, weight, None, None, mean, rstd, True, ctx.eps, [True, True, True]
        )
        return *grads, None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
