"""Mistake: backward takes mean(g · x̂), the projection's coefficient, with .float() "for
stability" (meant as the half upcast): a float64 gradient gets one reduction rounded to
float32, though every element still answers a nudge of x or grad_out."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_computes_in_float64"
SAYS = "backward's grad_x differs from autograd's through F.rms_norm in float64"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        _, grad_weight, none = Reference.backward(ctx, grad_out)
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        g = dy if weight is None else dy * weight
        proj = (g * x_hat).float().mean(-1, keepdim=True).to(x_hat.dtype)
        return (rstd * (g - x_hat * proj)).to(grad_out.dtype), grad_weight, none


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
