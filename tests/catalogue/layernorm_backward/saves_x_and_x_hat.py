"""Mistake: saves both x and x̂ (and the mean and rstd): two tensors the size of x, where one
is enough."""

import torch

from solutions.layernorm_backward import LayerNormFunction as Reference

EXPECT = "test_saves_only_what_backward_needs"
ALSO = "test_unbatched_input"


class LayerNormFunction(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(-1, keepdim=True) + eps)
        x_hat = (x - mean) * rstd
        ctx.save_for_backward(x, x_hat, mean, rstd, weight)
        return x_hat * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        _, x_hat, _, rstd, weight = ctx.saved_tensors
        rows = tuple(range(grad_out.dim() - 1))
        g = grad_out * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, (grad_out * x_hat).sum(rows), grad_out.sum(rows), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
