"""Mistake: drops the −x̂ · mean(g · x̂) term, so grad_x ignores the variance's dependence on x."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_grad_x_through_the_variance"
ALSO = (
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        rows = tuple(range(grad_out.dim() - 1))
        g = grad_out * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(rows), grad_out.sum(rows), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
