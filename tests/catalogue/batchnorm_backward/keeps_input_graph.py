"""Mistake: keeps the input as ctx.x = x, not save_for_backward: its autograd graph stays alive."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_saves_only_what_backward_needs"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.x, ctx.weight, ctx.eps = x, weight, eps
        dims, shape = _layout(x)
        mean = x.mean(dims, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(dims, keepdim=True) + eps)
        return (x - mean) * rstd * weight.view(shape) + bias.view(shape)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.x.detach(), ctx.weight.detach()
        dims, shape = _layout(x)
        mean = x.mean(dims, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(dims, keepdim=True) + ctx.eps)
        x_hat = (x - mean) * rstd
        g = grad_out * weight.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        return grad_x, (grad_out * x_hat).sum(dims), grad_out.sum(dims), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
