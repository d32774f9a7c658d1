"""Mistake: removes the projection from g in place (g -= ...): without a weight, g is grad_out
itself (.to() of a tensor to its own dtype returns it), so backward overwrites the caller's
gradient. With a weight, g = grad_out · weight is a new tensor and nothing shows."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_input_unmodified"
SAYS = "with weight=None: backward changed grad_out in place"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        _, grad_weight, none = Reference.backward(ctx, grad_out)
        x_hat, rstd, weight = ctx.saved_tensors
        g = grad_out.to(x_hat.dtype)
        g = g if weight is None else g * weight
        g -= x_hat * (g * x_hat).mean(-1, keepdim=True)
        return (rstd * g).to(grad_out.dtype), grad_weight, none


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
