"""Mistake: forward is right, but backward recomputes 1 / (sqrt(var) + eps) from a saved var."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_backward_eps_inside_sqrt"
ALSO = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).square().mean(-1, keepdim=True)
        x_hat = (x - mean) * torch.rsqrt(var + eps)
        ctx.save_for_backward(x_hat, var, weight)
        ctx.eps = eps
        return x_hat * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, var, weight = ctx.saved_tensors
        rstd = 1 / (var.sqrt() + ctx.eps)
        rows = tuple(range(grad_out.dim() - 1))
        g = grad_out * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(rows), grad_out.sum(rows), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
