"""Mistake: backward's variance term takes mean(g · x̂) over every element of the batch, not
each row's own. Right for one row, and wherever the rows share that mean; wrong otherwise."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_grad_x_through_the_variance"
ALSO = (
    "test_backward_eps_inside_sqrt, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        d = dy.shape[-1]
        g = dy * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean())  # one mean
        grads = grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return *(t.to(grad_out.dtype) for t in grads), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
