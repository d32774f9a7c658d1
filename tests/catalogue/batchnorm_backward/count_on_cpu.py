"""Mistake: backward divides by a count built as torch.tensor(m), on the CPU, of shape (1,)."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_follows_device"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        m = torch.tensor([grad_out.numel() // grad_out.shape[1]], dtype=grad_out.dtype)
        g = grad_out * weight.view(shape)
        g_mean = g.sum(dims, keepdim=True) / m
        grad_x = rstd * (g - g_mean - x_hat * (g * x_hat).mean(dims, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(dims), grad_out.sum(dims), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
