"""Mistake: backward returns (grad_x, grad_weight), forgetting the None for eps."""

from solutions.rmsnorm_backward import RMSNorm as Module
from solutions.rmsnorm_backward import RMSNormFunction as Reference

EXPECT = "test_backward_returns_a_grad_per_input"


class RMSNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        return Reference.backward(ctx, grad_out)[:2]


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(Module):
    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
