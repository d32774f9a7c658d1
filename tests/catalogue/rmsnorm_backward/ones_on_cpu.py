"""Mistake: builds a vector of D ones on the CPU for the row sums: backward mixes devices on a
GPU."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_follows_device"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        ones = torch.ones(grad_out.shape[-1], dtype=grad_out.dtype)
        g = grad_out if weight is None else grad_out * weight
        proj = (g * x_hat * ones).sum(-1, keepdim=True) / grad_out.shape[-1]
        grad_x = rstd * (g - x_hat * proj)
        return (
            grad_x,
            None if weight is None else (grad_out * x_hat).reshape(-1, grad_out.shape[-1]).sum(0),
            None,
        )


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
