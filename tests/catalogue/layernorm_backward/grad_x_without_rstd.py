"""Mistake: grad_x leaves out the final factor rstd: g − mean(g) − x̂ · mean(g · x̂), with
g = dy · weight, not rstd times it. The weight is there; the scale x̂ carries is not."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_backward_eps_inside_sqrt"
ALSO = (
    "test_grad_x_through_the_weight, "
    "test_zero_weight_elements, "
    "test_gradcheck, "
    "test_gradients_match_autograd"
)


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, _, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        d = dy.shape[-1]
        g = dy * weight
        grad_x = g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True)
        grads = grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return *(t.to(grad_out.dtype) for t in grads), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
