"""Mistake: computes half inputs in float32 but returns the gradients in float32 too."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_half_precision"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        half = grad_out.dtype in (torch.float16, torch.bfloat16)
        dy, w = (grad_out.float(), weight.float()) if half else (grad_out, weight)
        dims, shape = _layout(dy)
        g = dy * w.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        return grad_x, (dy * x_hat).sum(dims), dy.sum(dims), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
