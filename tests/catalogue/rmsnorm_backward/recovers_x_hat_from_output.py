"""Mistake: saves the output y (with the weight and 1/rms) instead of x̂, and recovers x̂ = y / w
in backward, as a memory-saving trick: exact for a weight with no zero element, but 0/0 = NaN
where a weight element is 0, which spreads through the row's projection term."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_zero_weight_elements"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
        y = xf * rstd if weight is None else xf * rstd * weight
        ctx.save_for_backward(y, rstd, weight)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        y, rstd, weight = ctx.saved_tensors
        x_hat = y if weight is None else y / weight  # 0/0 where weight is 0
        dy = grad_out.to(y.dtype)
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
