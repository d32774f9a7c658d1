"""Mistake: backward returns three gradients; forward has four inputs (eps needs its None)."""

from solutions.batchnorm_backward import BatchNormFunction as Reference

EXPECT = "test_backward_returns_a_grad_per_input"
ALSO = (
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_backward_by_hand, "
    "test_grad_bias, "
    "test_grad_weight, "
    "test_grad_x_through_the_weight, "
    "test_grad_x_through_the_mean, "
    "test_grad_x_through_the_variance, "
    "test_backward_eps_inside_sqrt, "
    "test_grad_x_over_n_h_w, "
    "test_zero_weight_elements, "
    "test_follows_device, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)


class BatchNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        return Reference.backward(ctx, grad_out)[:3]


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
