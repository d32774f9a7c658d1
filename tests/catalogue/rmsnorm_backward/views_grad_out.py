"""Mistake: flattens grad_out with .view(), which fails on a non-contiguous gradient."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_noncontiguous_grad_out"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        d = grad_out.shape[-1]
        dy = grad_out.view(-1, d)
        xh = x_hat.reshape(-1, d)
        g = dy if weight is None else dy * weight
        grad_x = rstd.reshape(-1, 1) * (g - xh * (g * xh).mean(-1, keepdim=True))
        grad_w = None if weight is None else (dy * xh).sum(0)
        return grad_x.view(grad_out.shape), grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
