"""Mistake: every reduction in backward runs over dim 0 only, wrong for (N, C, H, W)."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_grad_bias"
ALSO = "test_grad_weight, test_grad_x_over_n_h_w, test_gradcheck, test_gradients_match_autograd"


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        _, shape = _layout(grad_out)
        g = grad_out * weight.view(shape)
        grad_x = rstd * (g - g.mean(0, keepdim=True) - x_hat * (g * x_hat).mean(0, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(0), grad_out.sum(0), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
