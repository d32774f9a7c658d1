"""Mistake: sums grad_weight and grad_bias over dim 0 only, wrong as soon as x has 3 dims."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_grad_weight"
ALSO = "test_gradients_match_autograd, test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        g = grad_out * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grad_weight = (grad_out * x_hat).sum(0)
        while grad_weight.dim() > 1:  # "make the shape fit": averages the other rows away
            grad_weight = grad_weight.mean(0)
        return grad_x, grad_weight, grad_out.reshape(-1, grad_out.shape[-1]).sum(0), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
