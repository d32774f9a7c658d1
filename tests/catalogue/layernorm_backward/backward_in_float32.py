"""Mistake: backward always works in float32 (.float()), rounding float64 gradients.

A dtype policy, not a wrong derivative: the interview core passes, gradcheck included (its
forward computes in float64, and float32 rounding is far inside gradcheck's tolerance).
"""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_computes_in_float64"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = (t.float() for t in ctx.saved_tensors)
        dy = grad_out.float()
        d = dy.shape[-1]
        g = dy * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        grads = grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
        return *(t.to(grad_out.dtype) for t in grads), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
