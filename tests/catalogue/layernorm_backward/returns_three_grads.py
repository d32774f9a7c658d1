"""Mistake: backward returns three gradients; forward has four inputs (eps needs its None)."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_backward_returns_a_grad_per_input"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        return Reference.backward(ctx, grad_out)[:3]


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
