"""Mistake: forward upcasts half inputs, but backward computes in grad_out's half dtype."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_half_precision"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        x_hat, rstd = x_hat.to(grad_out.dtype), rstd.to(grad_out.dtype)
        g = grad_out if weight is None else grad_out * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grad_w = (
            None
            if weight is None
            else (grad_out * x_hat).reshape(-1, grad_out.shape[-1]).sum(0).to(weight.dtype)
        )
        return grad_x, grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
