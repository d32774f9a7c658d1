"""Mistake: backward returns three gradients; forward has four inputs (eps needs its None)."""

from solutions.batchnorm_backward import BatchNormFunction as Reference

EXPECT = "test_backward_returns_a_grad_per_input"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        return Reference.backward(ctx, grad_out)[:3]


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
