"""Mistake: forward is right, but backward recomputes the scale as 1 / (sqrt(mean(x²)) + eps)."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_backward_eps_inside_sqrt"
ALSO = "test_without_weight, test_module"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, rstd, weight)
        ctx.eps = eps
        y = xf * rstd if weight is None else xf * rstd * weight
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, _, weight = ctx.saved_tensors
        xf = x.to(grad_out.dtype)
        rstd = 1 / (xf.square().mean(-1, keepdim=True).sqrt() + ctx.eps)
        x_hat = xf * rstd
        g = grad_out * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).reshape(-1, grad_out.shape[-1]).sum(0), None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
