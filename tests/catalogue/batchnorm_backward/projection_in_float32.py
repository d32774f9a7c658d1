"""Mistake: backward takes the batch mean of g · x̂ with .float() "for stability" (meant as the
half upcast): a float64 gradient gets one reduction rounded to float32, though every element
still answers a nudge of x or grad_out."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_computes_in_float64"
SAYS = "backward's grad_x differs from autograd's through F.batch_norm in float64"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        _, grad_weight, grad_bias, none = Reference.backward(ctx, grad_out)
        x_hat, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        g = grad_out.to(x_hat.dtype) * weight.view(shape)
        gx_mean = (g * x_hat).float().mean(dims, keepdim=True).to(x_hat.dtype)
        grad_x = rstd * (g - g.mean(dims, keepdim=True) - x_hat * gx_mean)
        return grad_x.to(grad_out.dtype), grad_weight, grad_bias, none


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
