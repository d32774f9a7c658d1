"""Mistake: returns grad_weight and grad_bias in grad_out's dtype, not the parameters': with a
float32 weight and bias beside bfloat16 activations (mixed precision), their gradients are
rounded to bfloat16."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_float32_parameters_with_half_input"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight, grad_bias, none = Reference.backward(ctx, grad_out)
        return grad_x, grad_weight.to(grad_out.dtype), grad_bias.to(grad_out.dtype), none


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
