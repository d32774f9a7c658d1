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
        grad_x, grad_weight, none = Reference.backward(ctx, grad_out)
        if grad_weight is not None:
            x_hat, _, weight = ctx.saved_tensors
            grad_weight = (
                (grad_out.float() * x_hat.float())
                .reshape(-1, grad_out.shape[-1])
                .sum(0)
                .to(weight.dtype)
            )
        return grad_x, grad_weight, none


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
