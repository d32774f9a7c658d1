"""Mistake: multiplies grad_out by the weight in place, overwriting the caller's gradient."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_input_unmodified"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        grad_bias, grad_weight = grad_out.sum(dims), (grad_out * x_hat).sum(dims)
        g = grad_out.mul_(weight.view(shape))
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        return grad_x, grad_weight, grad_bias, None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
