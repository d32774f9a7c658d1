"""Mistake: backward hands the work to the built-in aten.native_layer_norm_backward."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_from_scratch"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, mean, rstd, weight, bias)
        return (x - mean) * rstd * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, mean, rstd, weight, bias = ctx.saved_tensors
        grads = torch.ops.aten.native_layer_norm_backward(
            grad_out, x, [x.shape[-1]], mean, rstd, weight, bias, [True, True, True]
        )
        return *grads, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
