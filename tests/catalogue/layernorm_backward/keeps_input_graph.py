"""Mistake: keeps the input as ctx.x = x instead of save_for_backward: the input's autograd
graph stays alive until backward (and a reference cycle with it)."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_saves_only_what_backward_needs"
ALSO = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.x, ctx.weight, ctx.eps = x, weight, eps
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).square().mean(-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + eps) * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.x.detach(), ctx.weight.detach()
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(-1, keepdim=True) + ctx.eps)
        x_hat = (x - mean) * rstd
        rows = tuple(range(grad_out.dim() - 1))
        g = grad_out * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(rows), grad_out.sum(rows), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
