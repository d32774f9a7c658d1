"""Mistake: grad_weight sums over (batch, sequence) for a 3-D input and over dim 0 otherwise:
written for (B, T, D) only, it is wrong for a 4-D input such as QK-norm's (B, H, T, Dh)."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_grad_weight"
ALSO = "test_gradients_match_autograd, test_unbatched_input"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, none = Reference.backward(ctx, grad_out)
        if grad_weight is not None:
            x_hat, _, weight = ctx.saved_tensors
            rows = (0, 1) if grad_out.dim() == 3 else 0
            grad_weight = (grad_out.to(x_hat.dtype) * x_hat).sum(rows).to(weight.dtype)
        return grad_x, grad_weight, none


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
