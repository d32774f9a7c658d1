"""Mistake: returns grad_weight in grad_out's dtype, not the weight's: with a float32 weight
beside bfloat16 activations (mixed precision), the weight's gradient is rounded to bfloat16."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_float32_weight_with_half_input"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, none = Reference.backward(ctx, grad_out)
        if grad_weight is not None:
            grad_weight = grad_weight.to(grad_out.dtype)
        return grad_x, grad_weight, none


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
