"""Mistake: computes half inputs in float32 but returns the gradients in float32 too."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_half_precision"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, grad_out):
        x_hat, rstd, weight = ctx.saved_tensors
        half = grad_out.dtype in (torch.float16, torch.bfloat16)
        dy, w = (grad_out.float(), weight.float()) if half else (grad_out, weight)
        d = dy.shape[-1]
        g = dy * w
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (dy * x_hat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
