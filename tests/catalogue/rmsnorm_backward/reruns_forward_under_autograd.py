"""Mistake: backward re-runs the forward formula under enable_grad and asks autograd for the
gradients, instead of deriving them."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_backward_by_hand"
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
        with torch.enable_grad():
            xi = x.detach().requires_grad_()
            wi = weight.detach().requires_grad_()
            y = xi * torch.rsqrt(xi.square().mean(-1, keepdim=True) + ctx.eps) * wi
            grad_x, grad_w = torch.autograd.grad(y, (xi, wi), grad_out)
        return grad_x, grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
