"""Mistake: backward computes grad_x one row at a time in a Python loop."""

import torch

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_vectorized"
ALSO = "test_without_weight, test_module"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        g = (grad_out * weight).reshape(-1, grad_out.shape[-1])
        xh, r = x_hat.reshape(g.shape), rstd.reshape(-1, 1)
        grad_x = torch.stack([r[i] * (g[i] - xh[i] * (g[i] * xh[i]).mean()) for i in range(len(g))])
        return (
            grad_x.reshape(grad_out.shape),
            (grad_out * x_hat).reshape(-1, grad_out.shape[-1]).sum(0),
            None,
        )


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
