"""Mistake: backward takes grad_out itself as the gradient reaching x̂, leaving out the weight
(g = dy, not dy · weight). Right only for a weight of ones."""

from solutions.batchnorm_backward import BatchNormFunction as Reference
from solutions.batchnorm_backward import _layout

EXPECT = "test_grad_x_through_the_weight"
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
        x_hat, rstd, _ = ctx.saved_tensors
        dims, _ = _layout(grad_out)
        dy = grad_out.to(x_hat.dtype)
        g = dy  # the mistake: dy · weight
        grad_x = rstd * (
            g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)
        )
        grads = grad_x, (dy * x_hat).sum(dims), dy.sum(dims)
        return *(t.to(grad_out.dtype) for t in grads), None


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
