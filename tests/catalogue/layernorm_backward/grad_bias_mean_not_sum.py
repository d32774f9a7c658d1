"""Mistake: averages grad_out over the rows for grad_bias instead of summing it."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_grad_bias"
ALSO = (
    "test_zero_weight_elements, test_gradcheck, test_gradients_match_autograd, test_unbatched_input"
)


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, _, _ = Reference.backward(ctx, grad_out)
        rows = tuple(range(grad_out.dim() - 1))
        return grad_x, grad_weight, grad_out.mean(rows), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
