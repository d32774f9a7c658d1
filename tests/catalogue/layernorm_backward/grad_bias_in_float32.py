"""Mistake: backward sums the bias's gradient in float32 (grad_out.float()), meant as the
half-precision upcast: a float64 bias gets a gradient with float32's 7 significant digits.

The bias's gradient is a sum of grad_out alone: a change of x never reaches it, so only a
change of grad_out shows the rounding.
"""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_computes_in_float64"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, _, none = Reference.backward(ctx, grad_out)
        d = grad_out.shape[-1]
        grad_bias = grad_out.float().reshape(-1, d).sum(0).to(grad_weight.dtype)
        return grad_x, grad_weight, grad_bias, none


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
