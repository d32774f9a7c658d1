"""Mistake: flattens grad_out with .view() to (N, C, H·W), which fails for a permuted gradient."""

from solutions.batchnorm_backward import BatchNormFunction as Reference

EXPECT = "test_noncontiguous_grad_out"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        flat = grad_out.view(grad_out.shape[0], grad_out.shape[1], -1)
        return Reference.backward(ctx, flat.view(grad_out.shape))


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
