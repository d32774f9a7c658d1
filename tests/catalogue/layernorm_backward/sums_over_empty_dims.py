"""Mistake: grad_weight and grad_bias sum over tuple(range(dim - 1)), which is () for an input
of shape (D,): torch's .sum(()) sums over every dim, and the gradients come out as scalars."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        dy = grad_out.to(x_hat.dtype)
        rows = tuple(range(dy.dim() - 1))  # () for x of shape (D,)
        grad_weight, grad_bias = (dy * x_hat).sum(rows), dy.sum(rows)
        g = dy * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grads = grad_x.to(grad_out.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype)
        return *grads, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
