"""Correct: reads what forward saved through ctx.saved_variables, the deprecated name of
ctx.saved_tensors that torch still serves (with a DeprecationWarning)."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "pass"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_variables
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
