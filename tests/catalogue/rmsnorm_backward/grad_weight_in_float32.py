"""Mistake: backward sums the weight's gradient in float32 (.float()), meant as the half-precision
upcast: a float64 weight gets a gradient with float32's 7 significant digits.

grad_x keeps x's dtype, so a check of grad_x alone passes it; each gradient is checked.
"""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_computes_in_float64"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        grad_weight = None
        if weight is not None:
            rows = tuple(range(dy.dim() - 1))
            grad_weight = (dy.float() * x_hat.float()).sum(rows).to(weight.dtype)
        g = dy if weight is None else dy * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x.to(grad_out.dtype), grad_weight, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
