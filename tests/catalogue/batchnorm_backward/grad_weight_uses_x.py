"""Mistake: grad_weight sums grad_out · x instead of grad_out · x̂ (the weight scales x̂)."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_grad_weight"
ALSO = "test_zero_weight_elements, test_gradcheck, test_gradients_match_autograd"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        dims, shape = _layout(x)
        mean = x.mean(dims, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(dims, keepdim=True) + eps)
        ctx.save_for_backward(x, mean, rstd, weight)
        return (x - mean) * rstd * weight.view(shape) + bias.view(shape)

    @staticmethod
    def backward(ctx, grad_out):
        x, mean, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        x_hat = (x - mean) * rstd
        g = grad_out * weight.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        return grad_x, (grad_out * x).sum(dims), grad_out.sum(dims), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
