"""Correct: saves x̂ and the rms itself (not its inverse), and divides by it in backward; the
same formula written with the rms cubed."""

import torch

from solutions.rmsnorm_backward import HALF
from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "pass"


class RMSNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float() if x.dtype in HALF else x
        eps = torch.finfo(xf.dtype).eps if eps is None else eps
        rms = (xf.square().mean(-1, keepdim=True) + eps).sqrt()
        ctx.save_for_backward(xf, rms, weight)
        y = xf / rms if weight is None else xf / rms * weight
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        xf, rms, weight = ctx.saved_tensors
        dy = grad_out.to(xf.dtype)
        grad_w = (
            None
            if weight is None
            else (dy * xf / rms).reshape(-1, dy.shape[-1]).sum(0).to(weight.dtype)
        )
        g = dy if weight is None else dy * weight
        # d/dx (x / rms) = 1/rms − x · x / (D · rms³)
        grad_x = g / rms - xf * (g * xf).mean(-1, keepdim=True) / rms**3
        return grad_x.to(grad_out.dtype), grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
