"""Mistake: flattens grad_out with .view(), which fails for a non-contiguous gradient."""

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_noncontiguous_grad_out"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        d = grad_out.shape[-1]
        flat = grad_out.view(-1, d)
        grad_x, grad_weight, grad_bias, _ = Reference.backward(ctx, flat.view(grad_out.shape))
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
