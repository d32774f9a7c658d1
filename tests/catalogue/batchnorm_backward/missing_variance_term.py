"""Mistake: drops the −x̂ · mean(g · x̂) term: the batch variance's dependence on x is lost."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_grad_x_through_the_variance"
ALSO = (
    "test_backward_eps_inside_sqrt, "
    "test_grad_x_over_n_h_w, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dims, shape = _layout(grad_out)
        g = grad_out * weight.view(shape)
        grad_x = rstd * (g - g.mean(dims, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(dims), grad_out.sum(dims), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
