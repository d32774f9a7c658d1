"""Mistake: forward is written from scratch, but backward recomputes x̂ with the built-in
F.rms_norm from the x it saved."""

import torch
import torch.nn.functional as F

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_from_scratch"
SAYS = "backward calls the built-in"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(xf, rstd, weight)
        ctx.eps = eps
        y = xf * rstd if weight is None else xf * rstd * weight
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        xf, rstd, weight = ctx.saved_tensors
        x_hat = F.rms_norm(xf, xf.shape[-1:], None, ctx.eps)
        dy = grad_out.to(x_hat.dtype)
        grad_w = None
        if weight is not None:
            grad_w = (dy * x_hat).reshape(-1, dy.shape[-1]).sum(0).to(weight.dtype)
        g = dy if weight is None else dy * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x.to(grad_out.dtype), grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
