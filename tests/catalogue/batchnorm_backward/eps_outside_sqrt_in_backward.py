"""Mistake: forward is right, but backward recomputes 1 / (sqrt(var) + eps) from a saved var."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_backward_eps_inside_sqrt"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        x_hat = (x - mean) * torch.rsqrt(var + eps)
        ctx.save_for_backward(x_hat, var, weight)
        ctx.eps = eps
        return x_hat * weight.view(shape) + bias.view(shape)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, var, weight = ctx.saved_tensors
        rstd = 1 / (var.sqrt() + ctx.eps)
        dims, shape = _layout(grad_out)
        g = grad_out * weight.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        return grad_x, (grad_out * x_hat).sum(dims), grad_out.sum(dims), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
