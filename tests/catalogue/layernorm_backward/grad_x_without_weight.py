"""Mistake: backward takes grad_out itself as the gradient reaching x̂, leaving out the weight
(g = dy, not dy · weight). Right only for a weight of ones."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_grad_x_through_the_weight"
ALSO = (
    "test_grad_x_through_the_mean, "
    "test_grad_x_through_the_variance, "
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd, "
    "test_unbatched_input"
)


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, _ = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        d = dy.shape[-1]
        g = dy  # the mistake: dy · weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grads = grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return *(t.to(grad_out.dtype) for t in grads), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
