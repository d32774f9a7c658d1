"""Mistake: forward computes half inputs in float32, but backward works in grad_out's dtype:
the saved x̂ and rstd are rounded to float16/bfloat16 and the gradient is computed there. On
ordinary data that costs an ulp or two; on grad_out = 384 + randn (float16) the row mean of
g = grad_out · weight is rounded by up to 1/8 of the spread, and grad_x with it."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_half_precision"
SAYS = "with grad_out = 384 + randn"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = (t.to(grad_out.dtype) for t in ctx.saved_tensors)
        d = grad_out.shape[-1]
        g = grad_out * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grad_weight, grad_bias = (
            (grad_out * x_hat).reshape(-1, d).sum(0),
            grad_out.reshape(-1, d).sum(0),
        )
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
