"""Mistake: backward returns three gradients; forward has four inputs (eps needs its None)."""

from solutions.layernorm_backward import LayerNormFunction as Reference

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
    "test_zero_weight_elements, "
    "test_follows_device, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        return Reference.backward(ctx, grad_out)[:3]


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
