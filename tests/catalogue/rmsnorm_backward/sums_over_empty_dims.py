"""Mistake: grad_weight sums over tuple(range(dim - 1)), which is () for an unbatched x of
shape (D,): torch's .sum(()) sums over every dim, and the gradient comes out as a scalar, which
autograd rejects."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_unbatched_input"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, none = Reference.backward(ctx, grad_out)
        if grad_weight is not None:
            x_hat, _, weight = ctx.saved_tensors
            rows = tuple(range(grad_out.dim() - 1))  # () for x of shape (D,)
            grad_weight = (grad_out.to(x_hat.dtype) * x_hat).sum(rows).to(weight.dtype)
        return grad_x, grad_weight, none


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
