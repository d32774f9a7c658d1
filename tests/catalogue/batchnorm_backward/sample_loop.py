"""Mistake: backward sums over the batch with a Python loop, one sample at a time."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_vectorized"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        _, shape = _layout(grad_out)
        dy = grad_out.to(x_hat.dtype)
        channels = dy.shape[1]
        sum_dy, sum_dy_xh = dy.new_zeros(channels), dy.new_zeros(channels)
        for n in range(dy.shape[0]):  # N iterations
            sum_dy = sum_dy + dy[n].reshape(channels, -1).sum(1)
            sum_dy_xh = sum_dy_xh + (dy[n] * x_hat[n]).reshape(channels, -1).sum(1)
        m = dy.numel() // channels
        g_mean = (weight * sum_dy / m).view(shape)
        gx_mean = (weight * sum_dy_xh / m).view(shape)
        grad_x = rstd * (dy * weight.view(shape) - g_mean - x_hat * gx_mean)
        grads = grad_x.to(grad_out.dtype), sum_dy_xh.to(weight.dtype), sum_dy.to(weight.dtype)
        return *grads, None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
