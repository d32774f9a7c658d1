"""Mistake: multiplies grad_out by the weight in place, overwriting the caller's gradient."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_input_unmodified"
ALSO = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        rows = tuple(range(grad_out.dim() - 1))
        grad_bias = grad_out.sum(rows)
        grad_weight = (grad_out * x_hat).sum(rows)
        g = grad_out.mul_(weight)
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
