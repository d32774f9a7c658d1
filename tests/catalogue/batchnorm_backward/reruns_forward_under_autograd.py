"""Mistake: backward re-runs the forward under torch.enable_grad() and calls torch.autograd.grad."""

import torch

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_backward_by_hand"


class BatchNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.save_for_backward(x, weight, bias)
        ctx.eps = eps
        return Reference.forward(_Scratch(), x, weight, bias, eps)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, bias = ctx.saved_tensors
        with torch.enable_grad():
            x, weight, bias = (t.detach().requires_grad_() for t in (x, weight, bias))
            dims, shape = _layout(x)
            mean = x.mean(dims, keepdim=True)
            var = (x - mean).square().mean(dims, keepdim=True)
            y = (x - mean) * torch.rsqrt(var + ctx.eps) * weight.view(shape) + bias.view(shape)
            grads = torch.autograd.grad(y, (x, weight, bias), grad_out)
        return *grads, None


class _Scratch:
    def save_for_backward(self, *tensors):
        pass


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
