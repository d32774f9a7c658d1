"""Mistake: backward always works in float32 (.float()), rounding float64 gradients.

A dtype policy, not a wrong derivative: the interview core passes, gradcheck included (its
forward computes in float64, and float32 rounding is far inside gradcheck's tolerance).
"""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_computes_in_float64"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = (t.float() for t in ctx.saved_tensors)
        dy = grad_out.float()
        dims, shape = _layout(dy)
        g = dy * weight.view(shape)
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        grads = grad_x, (dy * x_hat).sum(dims), dy.sum(dims)
        return *(t.to(grad_out.dtype) for t in grads), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
