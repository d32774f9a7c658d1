"""Mistake: saves x with save_for_backward and keeps x̂ too, in a dict on ctx: two tensors the
size of x, one of them out of save_for_backward's sight."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_saves_only_what_backward_needs"
SAYS = "ctx.cache['x_hat']"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x, rstd, weight)
        ctx.cache = {"x_hat": x_hat}
        y = x_hat if weight is None else x_hat * weight
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        _, rstd, weight = ctx.saved_tensors
        x_hat = ctx.cache["x_hat"]
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
