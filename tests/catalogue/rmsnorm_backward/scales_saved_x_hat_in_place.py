"""Mistake: backward reuses the saved x̂ as scratch space (x̂.mul_(...)) to save memory: the saved
tensor is destroyed, so a second backward through the same graph (gradcheck runs several) is
refused by autograd, and without a weight the output forward returned, which is that buffer,
changes under the caller."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_gradcheck"
SAYS = "gradcheck runs your function through autograd, forward then backward"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        grad_w = None
        if weight is not None:
            grad_w = (dy * x_hat).reshape(-1, dy.shape[-1]).sum(0).to(weight.dtype)
        g = dy if weight is None else dy * weight
        proj = (g * x_hat).mean(-1, keepdim=True)
        grad_x = rstd * (g - x_hat.mul_(proj))  # writes into the saved x̂
        return grad_x.to(grad_out.dtype), grad_w, None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
