"""Mistake: grad_weight sums over dim 0 only, not over every row (batch and sequence dims)."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_grad_weight"
ALSO = (
    "test_zero_weight_elements, "
    "test_without_weight, "
    "test_module, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        g = grad_out * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(0), None


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
