"""Mistake: backward returns None as grad_bias, as if the bias took no gradient. Every check
that compares the gradients says backward returned it, not that autograd lost it."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_backward_returns_a_grad_per_input"
ALSO = "test_grad_bias, test_zero_weight_elements, test_gradcheck, test_gradients_match_autograd"
SAYS = "backward returned None as grad_bias"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, _, _ = Reference.backward(ctx, grad_out)
        return grad_x, grad_weight, None, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
